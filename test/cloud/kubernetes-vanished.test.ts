/**
 * A wanted pod that goes without boa deleting it: one that was running was stopped from outside (its
 * job resumes as a new generation); one whose rank had already ended is reported as it ended, not
 * read as interrupted (found in review: a finished rank 1 whose node was then removed resumed a job
 * whose rank 0 was about to finish), also when only the watch saw its end, between two passes; one
 * marked before it went (evicted, or failed by the pod garbage collector as its node was deleted) is
 * reported with that reason and its run. Statuses are written through the API as a kubelet or the pod
 * garbage collector writes them.
 */
import { CoreV1Api, type V1Pod, type V1PodStatus } from '@kubernetes/client-node';
import { beforeEach, describe, expect, it } from 'vitest';
import type { DesiredJob, Executor, ReplicaStatus, Workload } from '../../src/service/ports.ts';
import type { FakeKubeApi } from '../fakes/kube-api/index.ts';
import { fakeKubeCluster, untilWatched } from './kube-executor-fixture.ts';

const NS = 'boa-jobs';
const workload: Workload = { image: 'repo/train:1', command: ['python3', 'train.py'] };
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const RANK1 = 'boa-job-1-g1-r1';

function job(nodes: readonly string[]): DesiredJob {
  return {
    jobId: 1,
    generation: 1,
    replicas: nodes.map((node, rank) => ({
      jobId: 1,
      generation: 1,
      rank,
      node,
      gpus: 4,
      workload,
      env: {},
    })),
  };
}

describe('Kubernetes executor: a pod gone without boa deleting it', () => {
  const cluster = fakeKubeCluster(NS);
  let fake: FakeKubeApi;
  let nodes: string[];
  beforeEach(() => void ({ fake, nodes } = cluster));

  /** Reconciles until rank 1's status satisfies `done` (pods start and end asynchronously). */
  async function rank1Until(
    reconcile: () => Promise<readonly ReplicaStatus[]>,
    done: (r?: ReplicaStatus) => boolean,
  ) {
    let rank1: ReplicaStatus | undefined;
    for (let i = 0; i < 50; i++) {
      rank1 = (await reconcile()).find((r) => r.rank === 1);
      if (done(rank1)) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return rank1;
  }

  it('that had ended is reported as it ended, and not made again', async () => {
    const e = cluster.executor();
    const desired = [job(nodes)];
    const reconcile = () => e.reconcile(desired);
    await reconcile();
    fake.kubelet.exit('boa-job-1-g1-r1', 0);
    expect(await rank1Until(reconcile, (r) => r?.phase === 'succeeded')).toMatchObject({
      phase: 'succeeded',
    });
    // Its node goes (a spot reclaim, a scale-in) and the pod garbage collector removes the pod.
    fake.kubelet.removeNode(nodes[1]!);
    await rank1Until(reconcile, () => !fake.pods(NS).some((p) => p.metadata.name === 'boa-job-1-g1-r1'));
    expect(fake.pods(NS).map((p) => p.metadata.name)).toEqual(['boa-job-1-g1-r0']);
    // Passes after the executor's watch has seen it go: rank 1 as it ended, never also interrupted (the
    // service resumes a job on any interrupted status of its generation), and no pod made again.
    for (let pass = 0; pass < 5; pass++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      const rank1 = (await reconcile()).filter((r) => r.rank === 1);
      expect(rank1.map((r) => [r.phase, r.interrupted ?? false])).toEqual([['succeeded', false]]);
    }
    expect(fake.pods(NS).map((p) => p.metadata.name)).toEqual(['boa-job-1-g1-r0']);
  });

  it('gone during a pass is reported by that pass, not left without a status until the next', async () => {
    const e = cluster.executor();
    const first = job(nodes);
    for (let i = 0; i < 100; i++) {
      if ((await e.reconcile([first])).filter((r) => r.phase === 'running').length === 2) break;
      await pause(20);
    }
    // A second job's pod create, held: the pass listed rank 1's pod before it went.
    const second: DesiredJob = { ...job([nodes[0]!]), jobId: 2 };
    second.replicas.forEach((r) => Object.assign(r, { jobId: 2, gpus: 0 }));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    fake.faults.inject({
      after: held,
      count: 1,
      match: (r) => r.method === 'POST' && r.path.endsWith('/pods'),
    });
    const pass = e.reconcile([first, second]);
    while (fake.faults.pending() > 0) await pause(5);
    fake.store.remove('pods', NS, 'boa-job-1-g1-r1');
    await untilWatched(e, 'boa-job-1-g1-r1', (p) => p === undefined, 'rank 1 gone');
    release();
    expect((await pass).filter((r) => r.jobId === 1 && r.rank === 1)).toEqual([
      expect.objectContaining({ phase: 'failed', interrupted: true, reason: 'pod deleted by someone else' }),
    ]);
  });

  /** Writes the pod's status through the API, given the pod and when its container started. */
  async function writeStatus(name: string, status: (pod: V1Pod, startedAt: Date) => V1PodStatus) {
    const api = fake.kubeConfig().makeApiClient(CoreV1Api);
    const pod = await api.readNamespacedPod({ name, namespace: NS });
    const startedAt = new Date(pod.status!.containerStatuses![0]!.state!.running!.startedAt!);
    await api.replaceNamespacedPodStatus({
      name,
      namespace: NS,
      body: { ...pod, status: status(pod, startedAt) },
    });
  }

  /**
   * Runs the job until a pass saw both ranks run, lets `end` act on rank 1 and its pod go before the
   * next pass (the watch hearing of both), and gives that pass's statuses of rank 1.
   */
  async function endedBetweenPasses(end: (e: Executor) => Promise<void>) {
    const e = cluster.executor();
    const desired = [job(nodes)];
    const reconcile = () => e.reconcile(desired);
    for (let i = 0; i < 100; i++) {
      if ((await reconcile()).filter((r) => r.phase === 'running').length === 2) break;
      await pause(20);
    }
    await end(e);
    await untilWatched(e, RANK1, (p) => p === undefined, 'rank 1 gone');
    expect(fake.pods(NS).map((p) => p.metadata.name)).toEqual(['boa-job-1-g1-r0']);
    return { rank1: (await reconcile()).filter((r) => r.rank === 1), reconcile };
  }

  it('that finished and went before a pass saw it end is reported finished, and not made again', async () => {
    const { rank1, reconcile } = await endedBetweenPasses(async (e) => {
      fake.kubelet.exit(RANK1, 0);
      await untilWatched(e, RANK1, (p) => p?.status?.phase === 'Succeeded', 'rank 1 finished');
      fake.kubelet.removeNode(nodes[1]!);
    });
    expect(rank1.map((r) => [r.phase, r.exitCode, r.interrupted ?? false])).toEqual([
      ['succeeded', 0, false],
    ]);
    await reconcile();
    expect(fake.pods(NS).map((p) => p.metadata.name)).toEqual(['boa-job-1-g1-r0']);
  });

  it('evicted under node pressure and then deleted between passes: interrupted, naming the eviction', async () => {
    const { rank1 } = await endedBetweenPasses(async (e) => {
      await writeStatus(RANK1, (pod, startedAt) => ({
        ...pod.status,
        phase: 'Failed',
        reason: 'Evicted',
        message: 'The node was low on resource: memory.',
        containerStatuses: [
          {
            ...pod.status!.containerStatuses![0]!,
            ready: false,
            state: {
              terminated: {
                exitCode: 137,
                reason: 'Error',
                startedAt,
                finishedAt: new Date(startedAt.getTime() + 300_000),
              },
            },
          },
        ],
      }));
      await untilWatched(e, RANK1, (p) => p?.status?.reason === 'Evicted', 'rank 1 evicted');
      fake.store.remove('pods', NS, RANK1);
    });
    expect(rank1).toEqual([
      expect.objectContaining({
        phase: 'failed',
        interrupted: true,
        reason: 'Evicted: The node was low on resource: memory.',
        ranForMs: 300_000,
      }),
    ]);
  });

  it('deleted by a person and gone before a pass saw it stop: interrupted by the deletion, though it exited 0', async () => {
    const { rank1 } = await endedBetweenPasses(async (e) => {
      // kubectl delete pod: SIGTERM, on which a job that checkpoints exits 0.
      const api = fake.kubeConfig().makeApiClient(CoreV1Api);
      await api.deleteNamespacedPod({ name: RANK1, namespace: NS });
      await untilWatched(e, RANK1, (p) => p?.metadata?.deletionTimestamp !== undefined, 'rank 1 deleted');
      fake.kubelet.exit(RANK1, 0);
    });
    expect(rank1).toEqual([
      expect.objectContaining({
        phase: 'failed',
        exitCode: 0,
        interrupted: true,
        reason: 'deleted while running',
      }),
    ]);
  });

  it("its node deleted, the pod garbage collector's mark read between passes: interrupted, with its run", async () => {
    const { rank1 } = await endedBetweenPasses(async (e) => {
      // As the collector does with a pod bound to a node that no longer exists: Failed and marked
      // (the container's state left as the kubelet last wrote it), then deleted at once.
      await writeStatus(RANK1, (pod, startedAt) => ({
        ...pod.status,
        phase: 'Failed',
        conditions: [
          ...(pod.status?.conditions ?? []),
          {
            type: 'DisruptionTarget',
            status: 'True',
            reason: 'DeletionByPodGC',
            message: 'PodGC: node no longer exists',
            lastTransitionTime: new Date(startedAt.getTime() + 600_000),
          },
        ],
      }));
      const marked = (p: V1Pod | undefined) =>
        p?.status?.conditions?.some((c) => c.type === 'DisruptionTarget') === true;
      await untilWatched(e, RANK1, marked, "the collector's mark");
      fake.kubelet.removeNode(nodes[1]!);
    });
    expect(rank1).toEqual([
      expect.objectContaining({
        phase: 'failed',
        interrupted: true,
        reason: 'DisruptionTarget: DeletionByPodGC (PodGC: node no longer exists)',
        ranForMs: 600_000,
      }),
    ]);
  });
});
