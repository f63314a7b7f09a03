/**
 * A replica whose node lost its running container (a reboot within Kubernetes' 5-minute eviction
 * wait): the kubelet fails the pod with the container terminated as ContainerStatusUnknown, exit 137,
 * no times. boa reports it interrupted, with the run it saw, not as the job failing (the real client
 * against the fake API server; the kubelet's status written through the API as a kubelet does).
 */
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { podName } from '../../src/cloud/kubernetes/names.ts';
import type { Executor, ReplicaStatus } from '../../src/service/ports.ts';
import { fakeKubeCluster, jobOnNodes, reconcileUntil, untilWatched } from './kube-executor-fixture.ts';

const NS = 'boa-jobs';
const cluster = fakeKubeCluster(NS);
const POD = podName(7, 1, 0);
const job = () => jobOnNodes(7, 1, [cluster.nodes[0]!], { gpus: 1, env: () => ({}) });
const LOST = 'The container could not be located when the pod was terminated';

/** The kubelet's report of a container its node lost, `ranMs` after it started. */
async function loseContainer(ranMs: number): Promise<void> {
  const api = cluster.fake.kubeConfig().makeApiClient(CoreV1Api);
  const pod: V1Pod = await api.readNamespacedPod({ name: POD, namespace: NS });
  const started = new Date(pod.status!.containerStatuses![0]!.state!.running!.startedAt!).getTime();
  await api.replaceNamespacedPodStatus({
    name: POD,
    namespace: NS,
    body: {
      ...pod,
      status: {
        ...pod.status,
        phase: 'Failed',
        conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: new Date(started + ranMs) }],
        containerStatuses: [
          {
            name: 'train',
            image: 'repo/train:1',
            imageID: '',
            ready: false,
            restartCount: 0,
            state: { terminated: { exitCode: 137, reason: 'ContainerStatusUnknown', message: LOST } },
          },
        ],
      },
    },
  });
}

async function failedRank0(executor: Executor): Promise<ReplicaStatus> {
  for (let i = 0; i < 300; i++) {
    const rank0 = (await executor.reconcile([job()])).find((s) => s.rank === 0);
    if (rank0?.phase === 'failed') return rank0;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('the lost container was never reported');
}

const reason = `ContainerStatusUnknown: ${LOST} (its node lost the container: a reboot, or its runtime's state gone)`;

describe('Kubernetes executor: a container its node lost', () => {
  it('is an interruption, with the run boa saw', async () => {
    const executor = cluster.executor();
    const pod = () => cluster.fake.pods(NS).find((p) => p.metadata.name === POD);
    await reconcileUntil(executor, [job()], () => pod()?.status?.phase === 'Running', 'running');
    // Seen running by the executor, as a tick would see it.
    expect((await executor.reconcile([job()])).find((s) => s.rank === 0)?.phase).toBe('running');
    await loseContainer(600_000);
    expect(await failedRank0(executor)).toMatchObject({
      phase: 'failed',
      exitCode: 137,
      interrupted: true,
      ranForMs: 600_000,
      reason,
    });
  });

  it('once seen failed and then collected, is still an interruption at every pass after', async () => {
    const executor = cluster.executor();
    const pod = () => cluster.fake.pods(NS).find((p) => p.metadata.name === POD);
    await reconcileUntil(executor, [job()], () => pod()?.status?.phase === 'Running', 'running');
    expect((await executor.reconcile([job()])).find((s) => s.rank === 0)?.phase).toBe('running');
    await loseContainer(600_000);
    await failedRank0(executor);
    // The pod garbage collector (or a person) deletes it, before the service acted on that report (a
    // pass whose statuses were not taken): what boa remembers of it must say the same.
    cluster.fake.store.remove('pods', NS, POD);
    for (let pass = 0; pass < 10; pass++) {
      const rank0 = (await executor.reconcile([job()])).filter((s) => s.rank === 0);
      expect(rank0).toEqual([expect.objectContaining({ phase: 'failed', interrupted: true, reason })]);
      expect(rank0[0]!.ranForMs).toBe(600_000);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(pod()).toBeUndefined();
  });

  it('lost and collected between two passes, is reported as lost, with the run boa saw', async () => {
    const executor = cluster.executor();
    const pod = () => cluster.fake.pods(NS).find((p) => p.metadata.name === POD);
    await reconcileUntil(executor, [job()], () => pod()?.status?.phase === 'Running', 'running');
    expect((await executor.reconcile([job()])).find((s) => s.rank === 0)?.phase).toBe('running');
    await loseContainer(600_000);
    // The executor's watch hears of it; no pass runs before the pod is gone.
    await untilWatched(executor, POD, (p) => p?.status?.phase === 'Failed', 'the lost container');
    cluster.fake.store.remove('pods', NS, POD);
    await untilWatched(executor, POD, (p) => p === undefined, 'the pod collected');
    expect((await executor.reconcile([job()])).filter((s) => s.rank === 0)).toEqual([
      expect.objectContaining({ phase: 'failed', interrupted: true, reason, ranForMs: 600_000 }),
    ]);
    expect(pod()).toBeUndefined();
  });

  it('after a restart of boa, is still an interruption, its run unknown', async () => {
    const first = cluster.executor();
    const pod = () => cluster.fake.pods(NS).find((p) => p.metadata.name === POD);
    await reconcileUntil(first, [job()], () => pod()?.status?.phase === 'Running', 'running');
    await first.close();
    await loseContainer(600_000);
    const status = await failedRank0(cluster.executor());
    expect(status).toMatchObject({ phase: 'failed', interrupted: true, reason });
    expect(status.ranForMs).toBeUndefined();
  });
});
