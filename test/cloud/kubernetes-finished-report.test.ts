/**
 * A rank 0 that finished on its own just as its job was rescaled is the job finished: the Kubernetes
 * executor reports that pod and deletes it only at the pass after, so a service that stops before it
 * reads the report hears it again from the pod (the real client against the fake API server).
 */
import { describe, expect, it } from 'vitest';
import { podName } from '../../src/cloud/kubernetes/names.ts';
import { fakeKubeCluster, jobOnNodes, reconcileUntil } from './kube-executor-fixture.ts';

const NS = 'boa-jobs';
const cluster = fakeKubeCluster(NS);
const job = (generation: number) =>
  jobOnNodes(7, generation, [cluster.nodes[0]!], { gpus: 1, env: () => ({}) });
const pod = (name: string) => cluster.fake.pods(NS).find((p) => p.metadata.name === name);

describe('a rank that finished on its own as its generation left', () => {
  it('is reported before its pod is deleted, and again by a restarted service', async () => {
    const first = cluster.executor();
    const name = podName(7, 1, 0);
    await reconcileUntil(first, [job(1)], () => pod(name)?.status?.phase === 'Running', 'running');
    cluster.fake.kubelet.exit(name, 0);
    // Seen finished by the executor (its watch), as a tick would see it.
    let seen = false;
    for (let i = 0; i < 300 && !seen; i++) {
      const statuses = await first.reconcile([job(1)]);
      seen = statuses.some((s) => s.generation === 1 && s.phase === 'succeeded');
      if (!seen) await new Promise((r) => setTimeout(r, 20));
    }
    expect(seen).toBe(true);
    // The tick rescaled it as it finished: generation 2 is wanted.
    const finished = expect.objectContaining({ generation: 1, rank: 0, phase: 'succeeded' });
    expect(await first.reconcile([job(2)])).toContainEqual(finished);
    expect(pod(name)).toBeDefined();
    // The service stops before it reads that pass: the next one hears it from the pod.
    await first.close();
    const second = cluster.executor();
    expect(await second.reconcile([job(2)])).toContainEqual(finished);
    // Reported by a pass that returned: deleted now, and generation 2 starts.
    await reconcileUntil(second, [job(2)], () => pod(podName(7, 2, 0)) !== undefined, 'generation 2');
    expect(pod(name)).toBeUndefined();
  }, 30_000);
});
