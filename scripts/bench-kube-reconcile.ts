/**
 * The Kubernetes executor's reconcile with many jobs, over the in-process fake API server (the real
 * @kubernetes/client-node over HTTP on 127.0.0.1; no real cluster). Prints one JSON object:
 * the first reconcile (creating every Service and pod), steady-state reconciles (nothing to change: the
 * watch-fed cache answers), a rescale of 10% of the jobs (each stopped pod's log kept first, as the
 * service with its data folder does), and a forced relist.
 *   npx tsx scripts/bench-kube-reconcile.ts [--jobs N] [--ticks N] [--no-pod-logs]
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { createKubernetesExecutor } from '../src/cloud/kubernetes/index.ts';
import type { DesiredJob } from '../src/service/ports.ts';
import { startFakeKubeApi } from '../test/fakes/kube-api/index.ts';
import { runMain, UsageError, scriptProgram } from './lib/inputs.ts';
import { checkTargets } from './lib/targets.ts';

const program = scriptProgram('bench:kube-reconcile')
  .option('--jobs <n>', 'placed jobs (half on one node, half on two)', '1000')
  .option('--ticks <n>', 'steady-state reconciles timed', '200')
  .option('--no-pod-logs', "keep no pod's log as it is deleted (as a service without a data folder)");

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number;
const round = (ms: number) => Math.round(ms * 100) / 100;

await runMain(async () => {
  const opts = program.parse().opts<{ jobs: string; ticks: string; podLogs: boolean }>();
  const jobCount = Number(opts.jobs);
  const ticks = Number(opts.ticks);
  if (!Number.isInteger(jobCount) || jobCount < 1) throw new UsageError('--jobs must be a positive integer');
  if (!Number.isInteger(ticks) || ticks < 10) throw new UsageError('--ticks must be an integer >= 10');

  const fake = await startFakeKubeApi({ kubelet: { autoStartMs: 0, autoStopMs: 0 }, historyLimit: 100_000 });
  try {
    // Room for every pod (1,500 pods of 2 GPUs on 64 nodes): with 4 GPUs a node, as until 2026-11-29, the
    // fake kubelet (which checks capacity since 2026-11-27) failed 1,372 of them, and every "steady" pass
    // deleted and made them again.
    const nodes = Array.from({ length: 64 }, () => fake.kubelet.addNode({ gpus: 64 }).metadata.name);
    const desired = (generationOf: (id: number) => number): DesiredJob[] =>
      Array.from({ length: jobCount }, (_, i) => {
        const jobId = i + 1;
        const generation = generationOf(jobId);
        const width = jobId % 2 === 0 ? 2 : 1;
        return {
          jobId,
          generation,
          replicas: Array.from({ length: width }, (_, rank) => ({
            jobId,
            generation,
            rank,
            node: nodes[(jobId + rank + generation) % nodes.length]!,
            gpus: 2,
            workload: { image: 'repo/train:1', command: ['python3', 'train.py'] },
            env: { NODE_RANK: String(rank) },
          })),
        };
      });
    // A data folder, as the service on EKS has: pods' logs are kept there as they are deleted.
    const dataDir = mkdtempSync(join(tmpdir(), 'boa-bench-kube-'));
    const executor = createKubernetesExecutor(
      {
        terminationGraceSeconds: 30,
        kubernetes: { namespace: 'boa-jobs' },
        ...(opts.podLogs ? { dataDir } : {}),
      },
      pino({ level: 'silent' }),
      { instanceId: 'test-boa', kubeConfig: fake.kubeConfig() },
    );
    // Its watches hold the process open: closed on any exit from here, a failed run's too.
    try {
      const timed = async (what: DesiredJob[]) => {
        const start = performance.now();
        const statuses = await executor.reconcile(what);
        return { ms: performance.now() - start, statuses };
      };

      const gen1 = desired(() => 1);
      const first = await timed(gen1);
      const pods = fake.pods('boa-jobs').length;
      // The steady state is every pod Running, seen through the watch, before anything is timed.
      let runningAtSteady = 0;
      for (let i = 0; i < 300; i++) {
        await new Promise((r) => setTimeout(r, 100));
        runningAtSteady = (await executor.reconcile(gen1)).filter((r) => r.phase === 'running').length;
        if (runningAtSteady === pods) break;
      }
      // Each pod has written something: a rescale keeps it.
      for (const pod of fake.pods('boa-jobs')) fake.kubelet.writeLog(pod.metadata.name, 'epoch 1\n');
      const steady: number[] = [];
      const before = fake.requests.length;
      // CPU time too: on a shared machine wall time mostly measures the other processes.
      const cpuBefore = process.cpuUsage();
      for (let i = 0; i < ticks; i++) steady.push((await timed(gen1)).ms);
      const cpu = process.cpuUsage(cpuBefore);
      const steadyCpuMs = (cpu.user + cpu.system) / 1000 / ticks;
      const steadyRequests = (fake.requests.length - before) / ticks;
      steady.sort((a, b) => a - b);

      const rescaled = desired((id) => (id % 10 === 0 ? 2 : 1));
      const stop = await timed(rescaled); // deletes the old generation's pods
      let start = 0;
      for (let i = 0; i < 100; i++) {
        await new Promise((r) => setTimeout(r, 20));
        const { ms, statuses } = await timed(rescaled);
        start += ms;
        // Until the new generation's pods run, not merely exist.
        const runningNew = statuses.filter((s) => s.generation === 2 && s.phase === 'running').length;
        if (runningNew >= (jobCount / 10) * 1.5 - 1) break;
      }

      const kept = join(dataDir, 'jobs');
      const podLogsKept = existsSync(kept)
        ? readdirSync(kept, { recursive: true }).filter((f) => String(f).endsWith('.pod.log')).length
        : 0;
      fake.store.compact();
      fake.closeWatches();
      await new Promise((r) => setTimeout(r, 100));
      const relist = await timed(rescaled);

      console.log(
        JSON.stringify(
          {
            jobs: jobCount,
            pods,
            runningAtSteady,
            apiRequests: fake.requests.length,
            firstReconcileMs: round(first.ms),
            steadyReconcileMs: { p50: round(quantile(steady, 0.5)), p99: round(quantile(steady, 0.99)) },
            steadyReconcileCpuMsMean: round(steadyCpuMs),
            apiRequestsPerSteadyReconcile: steadyRequests,
            loadAverage1m: round(loadavg()[0]!),
            rescale10PercentMs: { stopOld: round(stop.ms), startNew: round(start) },
            podLogsKept,
            relistReconcileMs: round(relist.ms),
            note: 'in-process fake API server over HTTP on 127.0.0.1, not a real cluster',
            // A steady reconcile answers from the watch-fed cache, but for one read: the namespace's
            // claim (namespace-claim.ts), read every pass so a claim another boa now holds stops this one.
            targets: checkTargets({
              apiRequestsPerSteadyReconcile: { value: steadyRequests, atMost: 1 },
              runningAtSteady: { value: runningAtSteady, atLeast: pods },
            }),
          },
          null,
          2,
        ),
      );
    } finally {
      await executor.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  } finally {
    await fake.close();
  }
});
