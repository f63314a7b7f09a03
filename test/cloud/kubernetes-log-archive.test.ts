/**
 * A pod's log kept as boa deletes the pod (src/cloud/kubernetes/log-archive.ts), with the real client
 * against the fake API server: a rescale's stopping pod followed to its last line, an ended pod's read
 * whole, both read and followed after their pods are gone, and a pod left stopping by a restart of boa.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { podName } from '../../src/cloud/kubernetes/names.ts';
import { fakeKubeCluster, jobOnNodes, reconcileUntil } from './kube-executor-fixture.ts';

const NS = 'boa-jobs';
const cluster = fakeKubeCluster(NS);
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function archived(options: { endedPodRetentionSeconds?: number } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'boa-pod-logs-'));
  dirs.push(dir);
  return { dir, executor: cluster.executor(options, { logArchiveDir: dir }) };
}

const job = (generation: number) =>
  jobOnNodes(7, generation, [cluster.nodes[0]!], { gpus: 1, env: () => ({}) });

const pod = (name: string) => cluster.fake.pods(NS).find((p) => p.metadata.name === name);
const phase = (name: string) => pod(name)?.status?.phase;

async function eventually<T>(read: () => Promise<T>, ok: (value: T) => boolean): Promise<T> {
  for (let i = 0; i < 300; i++) {
    const value = await read();
    if (ok(value)) return value;
    await new Promise((r) => setTimeout(r, 20));
  }
  return read();
}

describe("the Kubernetes executor keeping pods' logs", () => {
  it("keeps a rescaled generation's log to its last line, read and followed after its pod is gone", async () => {
    const { dir, executor } = archived();
    const first = podName(7, 1, 0);
    await reconcileUntil(executor, [job(1)], () => phase(first) === 'Running', 'generation 1 running');
    cluster.fake.kubelet.writeLog(first, 'epoch 1\nepoch 2\n');
    // The rescale: generation 1's pod is asked to stop, and says its last words in its grace period.
    await reconcileUntil(
      executor,
      [job(2)],
      () => Boolean(pod(first)?.metadata.deletionTimestamp),
      'stopping',
    );
    cluster.fake.kubelet.writeLog(first, 'SIGTERM: checkpoint saved at epoch 2\n');
    cluster.fake.kubelet.exit(first, 143);
    expect(pod(first)).toBeUndefined();
    const log = await eventually(
      () => executor.logs!({ jobId: 7, rank: 0, generation: 1, tailLines: 100 }),
      (l) => Boolean(l?.text.includes('checkpoint')),
    );
    expect(log).toEqual({ generation: 1, text: 'epoch 1\nepoch 2\nSIGTERM: checkpoint saved at epoch 2\n' });
    // Kept with the kubelet's stamps, in the job's folder as the local executor keeps its logs.
    const file = join(dir, '7', '1', '0.pod.log');
    expect(readFileSync(file, 'utf8')).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z epoch 1\n/);
    // Owner only: a job's log often holds credentials.
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, '7', '1')).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, '7')).mode & 0o777).toBe(0o700);
    // Followed after the pod went: the whole of it, then the end; a cursor goes on where it was.
    const follow = (await executor.followLog!(
      { jobId: 7, rank: 0, generation: 1, tailLines: 2 },
      new AbortController().signal,
    ))!;
    let seen = '';
    for await (const chunk of follow.chunks) seen += chunk;
    expect(seen).toBe('epoch 2\nSIGTERM: checkpoint saved at epoch 2\n');
    const from = { cursor: follow.from.cursor, skip: follow.from.skip + 6 };
    const rest = (await executor.followLog!(
      { jobId: 7, rank: 0, generation: 1, tailLines: 2, from },
      new AbortController().signal,
    ))!;
    seen = '';
    for await (const chunk of rest.chunks) seen += chunk;
    expect(seen).toBe('2\nSIGTERM: checkpoint saved at epoch 2\n');
    // Generation 2 runs; its own log is the live one, generation 1's is still there.
    const second = podName(7, 2, 0);
    await reconcileUntil(executor, [job(2)], () => phase(second) === 'Running', 'generation 2 running');
    cluster.fake.kubelet.writeLog(second, 'resumed at epoch 3\n');
    expect(await executor.logs!({ jobId: 7, rank: 0, tailLines: 100 })).toEqual({
      generation: 2,
      text: 'resumed at epoch 3\n',
    });
    expect((await executor.logs!({ jobId: 7, rank: 0, generation: 1, tailLines: 1 }))?.text).toBe(
      'SIGTERM: checkpoint saved at epoch 2\n',
    );
  }, 30_000);

  it("keeps a failed job's log when its pod is deleted, and the newest kept one is read once all pods are gone", async () => {
    // Its ended pod kept no while for its log: deleted at once.
    const { executor } = archived({ endedPodRetentionSeconds: 0 });
    const name = podName(7, 1, 0);
    await reconcileUntil(executor, [job(1)], () => phase(name) === 'Running', 'running');
    cluster.fake.kubelet.writeLog(name, 'Traceback: CUDA out of memory\n');
    cluster.fake.kubelet.exit(name, 1);
    // The job runs nothing now (failed for good): its pod is deleted.
    await reconcileUntil(
      executor,
      [],
      () => !pod(name) || Boolean(pod(name)?.metadata.deletionTimestamp),
      'deleted',
    );
    cluster.fake.kubelet.finishTermination(name);
    const read = () => executor.logs!({ jobId: 7, rank: 0, tailLines: 10 });
    expect(await eventually(read, (log) => log !== undefined)).toEqual({
      generation: 1,
      text: 'Traceback: CUDA out of memory\n',
    });
    expect(await executor.logs!({ jobId: 7, rank: 1, tailLines: 10 })).toBeUndefined();
    // Its retention over (retention.ts asks), the kept log goes.
    expect(executor.keptLogJobs!()).toEqual([7]);
    expect(executor.deleteKeptLogs!(7)).toBe(true);
    expect(executor.keptLogJobs!()).toEqual([]);
    expect(await executor.logs!({ jobId: 7, rank: 0, tailLines: 10 })).toBeUndefined();
  }, 30_000);

  it('follows a pod a restarted boa finds stopping, and keeps nothing without a data folder', async () => {
    const { dir, executor } = archived();
    const name = podName(7, 1, 0);
    await reconcileUntil(executor, [job(1)], () => phase(name) === 'Running', 'running');
    cluster.fake.kubelet.writeLog(name, 'epoch 1\n');
    await reconcileUntil(
      executor,
      [job(2)],
      () => Boolean(pod(name)?.metadata.deletionTimestamp),
      'stopping',
    );
    // boa stops while its pod stops: what it wrote so far is kept.
    await executor.close();
    const file = join(dir, '7', '1', '0.pod.log');
    expect(readFileSync(file, 'utf8')).toMatch(/ epoch 1\n$/);
    cluster.fake.kubelet.writeLog(name, 'checkpoint saved\n');
    const restarted = cluster.executor({}, { logArchiveDir: dir });
    await restarted.reconcile([job(2)]);
    await new Promise((r) => setTimeout(r, 200));
    cluster.fake.kubelet.writeLog(name, 'bye\n');
    cluster.fake.kubelet.exit(name, 143);
    const log = await eventually(
      () => restarted.logs!({ jobId: 7, rank: 0, generation: 1, tailLines: 10 }),
      (l) => Boolean(l?.text.endsWith('bye\n')),
    );
    expect(log?.text).toBe('epoch 1\ncheckpoint saved\nbye\n');
    // Without a folder (an in-memory store), the gone pod's log is gone.
    const plain = cluster.executor();
    expect(await plain.logs!({ jobId: 7, rank: 0, generation: 1, tailLines: 10 })).toBeUndefined();
    expect(existsSync(join(dir, '7', '2'))).toBe(false);
  }, 30_000);
});
