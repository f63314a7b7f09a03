/**
 * What the execution tests (execution.*.test.ts) share: an executor scripted by the test, a service
 * over it with a virtual clock and a budget, and waits for what the executor's real-time follow-ups do.
 */
import { expect } from 'vitest';
import type { DesiredJob, Executor, ReplicaStatus } from '../../src/service/ports.ts';
import { ManualClock, startService } from './harness.ts';

/** What each test started or made, undone after it: pass `runCleanups` to afterEach. */
export const cleanups: Array<() => Promise<void> | void> = [];
export async function runCleanups(): Promise<void> {
  for (const fn of cleanups.splice(0)) await fn();
}

/** An executor that runs nothing: it reports each desired replica running, or as the test ended it. */
export class ScriptedExecutor implements Executor {
  readonly kind = 'local' as const;
  readonly calls: DesiredJob[][] = [];
  /** Exit codes the test gave replicas, by "job/generation/rank". */
  readonly exits = new Map<string, number>();
  /** Replicas stopped from outside (they exited 0 on a SIGTERM nobody in boa sent), with how long they ran. */
  readonly interrupted = new Map<string, number>();
  /** Any other status the test gives a replica. */
  readonly statuses = new Map<string, Partial<ReplicaStatus>>();
  /** Jobs whose replicas all stay starting, with this reason (a pod that never starts). */
  readonly starting = new Map<number, string>();
  /** Statuses of replicas no longer desired, reported at the next reconcile only. */
  readonly endedBefore: ReplicaStatus[] = [];

  /** When each job/generation was first asked for, by the service's clock (set by the test). */
  readonly asked = new Map<string, number>();
  now: () => number = () => 0;

  /** While set, every reconcile fails (the executor or its API server down). */
  down = false;
  /** While set, the jobs in `unmade` could not be made for no fault of theirs (the API server refusing the creates). */
  writesFailing = false;

  outage(): ReadonlySet<number> {
    return this.writesFailing ? new Set(this.unmade) : new Set();
  }

  async reconcile(desired: readonly DesiredJob[]): Promise<readonly ReplicaStatus[]> {
    if (this.down) throw new Error('the API server is down');
    this.calls.push([...desired]);
    for (const job of desired)
      if (!this.asked.has(`${job.jobId}/${job.generation}`))
        this.asked.set(`${job.jobId}/${job.generation}`, this.now());
    return this.endedBefore.splice(0).concat(this.desiredStatuses(desired));
  }

  /** Jobs none of whose replicas is ever made (every create refused as a step error). */
  readonly unmade = new Set<number>();

  private desiredStatuses(desired: readonly DesiredJob[]): ReplicaStatus[] {
    return desired
      .filter((job) => !this.unmade.has(job.jobId))
      .flatMap((job) =>
        job.replicas.map((r): ReplicaStatus => {
          const key = `${r.jobId}/${r.generation}/${r.rank}`;
          const code = this.exits.get(key);
          const base = { jobId: r.jobId, generation: r.generation, rank: r.rank, node: r.node };
          const given = this.statuses.get(key);
          if (given) return { ...base, phase: 'running', ...given };
          const stuck = this.starting.get(r.jobId);
          if (stuck !== undefined) return { ...base, phase: 'starting', reason: stuck };
          const ranForMs = this.interrupted.get(key);
          if (ranForMs !== undefined) {
            return {
              ...base,
              phase: 'failed',
              exitCode: 0,
              reason: 'exited 0 after SIGTERM',
              interrupted: true,
              ranForMs,
            };
          }
          if (code === undefined) return { ...base, phase: 'running' };
          return {
            ...base,
            phase: code === 0 ? 'succeeded' : 'failed',
            exitCode: code,
            reason: `exited ${code}`,
          };
        }),
      );
  }

  checkWorkload() {
    return undefined;
  }

  async close(): Promise<void> {}

  last(jobId: number): DesiredJob | undefined {
    return this.calls.at(-1)?.find((j) => j.jobId === jobId);
  }
}

/** A running bert job moved to a new generation (as a rescale does) before its old replicas' exits are seen. */
export async function movedOn() {
  const s = await service();
  const { id } = (await s.request('POST', '/v1/jobs', { class: 'bert', workload })).body;
  await s.ticks(4);
  const job = s.service.job(id);
  const old = { jobId: id, generation: job.generation, node: job.allocation[0]!, exitCode: 0 };
  job.generation += 1;
  job.generationSince = s.clock.now();
  return { s, id, job, old };
}

export async function service(
  config: Record<string, unknown> = {},
  store: { dataDir?: string; clock?: ManualClock } = {},
) {
  const executor = new ScriptedExecutor();
  const s = await startService({
    executor,
    ...store,
    config: {
      priorRates: { cifar10: 8, bert: 1 },
      local: { maxNodes: 16, bootSeconds: 60, releaseSeconds: 30 },
      publicUrl: 'http://boa.test:8080',
      ...config,
    },
  });
  cleanups.push(s.close);
  expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 30 })).status).toBe(200);
  await s.service.planner.idle();
  /** Ticks, then lets the executor's reconcile (run after each tick, never inside it) finish. */
  const ticks = async (count: number) => {
    for (let i = 0; i < count; i++) {
      await s.ticks(1);
      await s.service.execution.settle();
    }
  };
  return { ...s, executor, ticks };
}

export const workload = {
  command: ['python', 'train.py'],
  env: { EPOCHS: '90' },
  checkpoint: { uri: '/ckpt/r18' },
};

/**
 * The executor answers at last, showing an old job `oldJobId` ended: the id of the job with a workload
 * registered next (201).
 */
export async function answeredShowing(
  s: Awaited<ReturnType<typeof startService>>,
  executor: ScriptedExecutor,
  oldJobId: number,
): Promise<number> {
  executor.down = false;
  executor.endedBefore.push({
    jobId: oldJobId,
    generation: 1,
    rank: 0,
    node: 'n',
    phase: 'succeeded',
    exitCode: 0,
  });
  s.service.execution.reconcile();
  await s.service.execution.settle();
  const made = await s.request('POST', '/v1/jobs', { class: 'bert', workload });
  expect(made.status).toBe(201);
  return made.body.id;
}

/**
 * Polls in real time (the executor's follow-ups are real timers, 1 s apart at most), failing after 20 s:
 * it returns as soon as the condition holds, and a loaded machine can take several follow-ups' time.
 */
export async function waitFor(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}
