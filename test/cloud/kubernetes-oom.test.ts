/**
 * A replica the kernel killed for memory: the kubelet says only OOMKilled, and boa's reason says what
 * to do, naming the memory limit and the width it came from (the real client against the fake API
 * server, whose kubelet ends the container with 137 as the OOM killer does).
 */
import { describe, expect, it } from 'vitest';
import { podName } from '../../src/cloud/kubernetes/names.ts';
import type { DesiredJob, ReplicaStatus } from '../../src/service/ports.ts';
import { fakeKubeCluster, jobOnNodes, reconcileUntil } from './kube-executor-fixture.ts';

const NS = 'boa-jobs';
const cluster = fakeKubeCluster(NS);
const POD = podName(7, 1, 0);
const pod = () => cluster.fake.pods(NS).find((p) => p.metadata.name === POD);

function job(memoryPerGpu?: string): DesiredJob {
  const desired = jobOnNodes(7, 1, [cluster.nodes[0]!], { gpus: 2, env: () => ({}) });
  return {
    ...desired,
    replicas: desired.replicas.map((r) => ({ ...r, workload: { ...r.workload, memoryPerGpu } })),
  };
}

/** Runs the job's pod, has the kernel kill it, and returns rank 0's status once the executor saw it. */
async function oomKilled(desired: DesiredJob): Promise<ReplicaStatus> {
  const executor = cluster.executor();
  await reconcileUntil(executor, [desired], () => pod()?.status?.phase === 'Running', 'running');
  cluster.fake.kubelet.kill(POD, 'OOMKilled');
  for (let i = 0; i < 300; i++) {
    const rank0 = (await executor.reconcile([desired])).find((s) => s.rank === 0);
    if (rank0?.phase === 'failed') return rank0;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('the OOM kill was never reported');
}

describe('Kubernetes executor: a replica killed for memory', () => {
  it('names its memory limit, the GPUs it was sized for, and workload.memoryPerGpu', async () => {
    expect(await oomKilled(job('12Gi'))).toMatchObject({
      phase: 'failed',
      exitCode: 137,
      reason:
        "OOMKilled: the container used more than its memory limit, 24Gi at 2 GPUs (workload.memoryPerGpu times the replica's GPUs): raise workload.memoryPerGpu or lower the job's memory use",
    });
  });

  it('without a memory limit, says the node ran out and to set workload.memoryPerGpu', async () => {
    expect(await oomKilled(job())).toMatchObject({
      phase: 'failed',
      exitCode: 137,
      reason:
        'OOMKilled: the node ran out of memory and its kernel killed the container, which had no memory set aside: set workload.memoryPerGpu to what a replica needs per GPU',
    });
  });
});
