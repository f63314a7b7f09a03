/**
 * A wanted pod that goes without boa deleting it: one that was running was stopped from outside (its
 * job resumes as a new generation); one whose rank had already ended is reported as it ended, not
 * read as interrupted (found in review: a finished rank 1 whose node was then removed resumed a job
 * whose rank 0 was about to finish).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { DesiredJob, ReplicaStatus, Workload } from '../../src/service/ports.ts';
import type { FakeKubeApi } from '../fakes/kube-api/index.ts';
import { fakeKubeCluster } from './kube-executor-fixture.ts';

const NS = 'boa-jobs';
const workload: Workload = { image: 'repo/train:1', command: ['python3', 'train.py'] };

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
});
