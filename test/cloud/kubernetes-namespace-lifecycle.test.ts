import { describe, expect, it } from 'vitest';
import { JobsNamespaceError, podName } from '../../src/cloud/kubernetes/index.ts';
import { fakeKubeCluster, jobOnNodes, reconcileUntil } from './kube-executor-fixture.ts';

const NS = 'lifecycle-jobs';
const cluster = fakeKubeCluster(NS);

// The API server's NamespaceLifecycle admission, word for word, on a create in the namespace.
const MISSING = `namespaces "${NS}" not found`;
const TERMINATING = (kind: string, name: string) =>
  `${kind} "${name}" is forbidden: unable to create new content in namespace ${NS} because it is being terminated`;

/** Every create answered as the API server answers it while `state.on` (the fake has no namespaces). */
function namespaceRefuses(status: 403 | 404, state: { on: boolean }, leases: boolean) {
  cluster.fake.faults.inject({
    status,
    reason: status === 404 ? 'NotFound' : 'Forbidden',
    message: status === 404 ? MISSING : TERMINATING('objects', 'x'),
    count: 10_000,
    match: (r) => state.on && r.method === 'POST' && (leases || !r.path.includes('/leases')),
  });
}

describe('a jobs namespace missing or being deleted', () => {
  it("a namespace that does not exist fails the pass saying so and naming the setting, not the API server's raw 404", async () => {
    const state = { on: true };
    namespaceRefuses(404, state, true);
    const executor = cluster.executor();
    const job = jobOnNodes(7, 1, [cluster.nodes[0]!], { gpus: 1, env: () => ({}) });
    const pass = executor.reconcile([job]);
    await expect(pass).rejects.toThrow(JobsNamespaceError);
    await expect(pass).rejects.toThrow(`jobs namespace ${NS} does not exist in the cluster`);
    await expect(pass).rejects.toThrow(/BOA_JOBS_NAMESPACE/);
    expect(cluster.fake.pods(NS)).toEqual([]);
    // Made: the next pass claims it and starts the job.
    state.on = false;
    await reconcileUntil(
      executor,
      [job],
      () => cluster.fake.pods(NS).some((p) => p.metadata.name === podName(7, 1, 0)),
      'the pod made once the namespace exists',
    );
  });

  it('a namespace being deleted, its claim gone with it, fails the pass saying so', async () => {
    const state = { on: true };
    namespaceRefuses(403, state, true);
    const pass = cluster.executor().reconcile([]);
    await expect(pass).rejects.toThrow(JobsNamespaceError);
    await expect(pass).rejects.toThrow(`jobs namespace ${NS} is being deleted`);
  });

  it('creates refused while the namespace is being deleted fail no replica (no restart of the job): they wait, and the pods are made once it can hold them', async () => {
    const executor = cluster.executor();
    await executor.reconcile([]); // the claim made while the namespace still takes creates
    const state = { on: true };
    namespaceRefuses(403, state, false);
    const job = jobOnNodes(7, 1, [cluster.nodes[0]!, cluster.nodes[1]!], {
      gpus: 1,
      env: () => ({ BOA_JOB_TOKEN: 't' }),
    });
    for (let pass = 0; pass < 3; pass++) {
      const statuses = await executor.reconcile([job]);
      expect(statuses.filter((s) => s.phase === 'failed')).toEqual([]);
    }
    expect(cluster.fake.pods(NS)).toEqual([]);
    state.on = false;
    await reconcileUntil(
      executor,
      [job],
      () => cluster.fake.pods(NS).filter((p) => p.status?.phase === 'Running').length === 2,
      'both pods running once creates are taken again',
    );
  });
});
