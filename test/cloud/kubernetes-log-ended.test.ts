/**
 * An ended pod's log kept as soon as boa sees it ended, not only when boa deletes the pod: its node can
 * go first (an idle node is scaled in, ended pods holding none; a node dies), and the log with it. Read
 * once: not again every pass, nor by a restarted boa.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { podName } from '../../src/cloud/kubernetes/names.ts';
import type { Executor } from '../../src/service/ports.ts';
import { fakeKubeCluster, jobOnNodes, reconcileUntil } from './kube-executor-fixture.ts';

const NS = 'boa-jobs';
const cluster = fakeKubeCluster(NS);
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
const pod = (name: string) => cluster.fake.pods(NS).find((p) => p.metadata.name === name);
/** The archive's reads of a pod's log (stamped; `boa jobs logs` reads a live one without stamps). */
const archiveReads = (name: string) =>
  cluster.fake.requests.filter(
    (r) => r.path.endsWith(`/pods/${name}/log`) && r.query.get('timestamps') === 'true',
  ).length;

async function passes(executor: Executor, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    await executor.reconcile([]);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Job 9's one replica running on the first node, under an executor that keeps ended pods' logs in a temp dir. */
async function runningPod() {
  const dir = mkdtempSync(join(tmpdir(), 'boa-ended-logs-'));
  dirs.push(dir);
  const executor = cluster.executor({}, { logArchiveDir: dir });
  const node = cluster.nodes[0]!;
  const job = jobOnNodes(9, 1, [node], { gpus: 1, env: () => ({}) });
  const name = podName(9, 1, 0);
  await reconcileUntil(executor, [job], () => pod(name)?.status?.phase === 'Running', 'running');
  return { dir, executor, node, job, name };
}

describe("an ended pod's log", () => {
  it('is kept once boa sees it ended, so it outlives its node being scaled in; read once, not every pass', async () => {
    const { dir, executor, node, job, name } = await runningPod();
    cluster.fake.kubelet.writeLog(name, 'Traceback: CUDA error: out of memory\n');
    cluster.fake.kubelet.exit(name, 1);
    let failed = false;
    for (let i = 0; i < 300 && !failed; i++) {
      failed = (await executor.reconcile([job])).some((r) => r.jobId === 9 && r.phase === 'failed');
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(failed).toBe(true);
    // Failed for good: its job runs nothing, and its ended pod is kept for an hour for its log.
    await passes(executor, 3);
    expect(pod(name)?.status?.phase).toBe('Failed');
    expect(archiveReads(name)).toBe(1);
    const file = join(dir, '9', '1', '0.pod.log');
    const kept = readFileSync(file, 'utf8');
    expect(kept).toMatch(/Z Traceback: CUDA error: out of memory\n$/);

    // Nothing holds the node: boa scales it in; the Node goes, and the pod garbage collector its pods.
    cluster.fake.kubelet.removeNode(node);
    await passes(executor, 3);
    expect(pod(name)).toBeUndefined();
    expect(await executor.logs!({ jobId: 9, rank: 0, tailLines: 10 })).toEqual({
      generation: 1,
      text: 'Traceback: CUDA error: out of memory\n',
    });
    expect(archiveReads(name)).toBe(1);
  }, 30_000);

  it("is answered (and followed) from boa's copy while the API server cannot reach its kubelet (its node going), not an error", async () => {
    const { dir, executor, node, job, name } = await runningPod();
    cluster.fake.kubelet.writeLog(name, 'step 1\nTraceback: NCCL timeout\n');
    cluster.fake.kubelet.exit(name, 1);
    const file = join(dir, '9', '1', '0.pod.log');
    await reconcileUntil(executor, [job], () => existsSync(file), 'kept');

    // Scaled in: the instance is gone, its Node and pods not yet collected; the API server's dial to the
    // kubelet fails (a 500 naming it) at every try.
    cluster.fake.kubelet.removeNode(node, { collectPods: false });
    cluster.fake.faults.inject({
      status: 500,
      message: `Get "https://10.0.0.1:10250/containerLogs/${NS}/${name}/train": dial tcp 10.0.0.1:10250: i/o timeout`,
      count: 100,
      match: (r) => r.path.endsWith(`/pods/${name}/log`),
    });
    expect(await executor.logs!({ jobId: 9, rank: 0, tailLines: 1 })).toEqual({
      generation: 1,
      text: 'Traceback: NCCL timeout\n',
    });
    expect(await executor.logs!({ jobId: 9, rank: 0, generation: 1, tailLines: 10 })).toEqual({
      generation: 1,
      text: 'step 1\nTraceback: NCCL timeout\n',
    });
    const followed = await executor.followLog!(
      { jobId: 9, rank: 0, tailLines: 10 },
      AbortSignal.timeout(20_000),
    );
    expect(followed?.generation).toBe(1);
    let text = '';
    for await (const chunk of followed!.chunks) text += chunk;
    expect(text).toBe('step 1\nTraceback: NCCL timeout\n');
    // A running container's log (none kept whole) is not made up: the failure is said as it is.
    cluster.fake.faults.clear();
    const other = podName(10, 1, 0);
    const running = jobOnNodes(10, 1, [cluster.nodes[1]!], { gpus: 1, env: () => ({}) });
    await reconcileUntil(executor, [running], () => pod(other)?.status?.phase === 'Running', 'running');
    cluster.fake.faults.inject({
      status: 500,
      count: 100,
      match: (r) => r.path.endsWith(`/pods/${other}/log`),
    });
    await expect(executor.logs!({ jobId: 10, rank: 0, tailLines: 10 })).rejects.toThrow(
      /read pod log failed/,
    );
    await expect(
      executor.followLog!({ jobId: 10, rank: 0, tailLines: 10 }, AbortSignal.timeout(20_000)),
    ).rejects.toThrow(/read pod log failed/);
    cluster.fake.faults.clear();
  }, 30_000);

  it('a restarted boa does not read a log it kept again, and keeps it when it deletes the pod', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'boa-ended-logs-'));
    dirs.push(dir);
    const first = cluster.executor({}, { logArchiveDir: dir });
    const job = jobOnNodes(9, 1, [cluster.nodes[0]!], { gpus: 1, env: () => ({}) });
    const name = podName(9, 1, 0);
    await reconcileUntil(first, [job], () => pod(name)?.status?.phase === 'Running', 'running');
    cluster.fake.kubelet.writeLog(name, 'epoch 1\n');
    cluster.fake.kubelet.exit(name, 1);
    const file = join(dir, '9', '1', '0.pod.log');
    await reconcileUntil(first, [job], () => existsSync(file), 'kept');
    await first.close();
    const kept = readFileSync(file, 'utf8');

    const restarted = cluster.executor({ endedPodRetentionSeconds: 0 }, { logArchiveDir: dir });
    // Its retention over, the restarted boa deletes the pod: the log it kept is not read again.
    await reconcileUntil(restarted, [], () => !pod(name), 'deleted');
    expect(archiveReads(name)).toBe(1);
    expect(readFileSync(file, 'utf8')).toBe(kept);
  }, 30_000);
});
