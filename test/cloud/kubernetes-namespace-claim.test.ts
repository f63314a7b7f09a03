import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import {
  CLAIM_LEASE_NAME,
  CLAIM_LEASE_SECONDS,
  createKubernetesExecutor,
  NamespaceClaimedError,
  podName,
} from '../../src/cloud/kubernetes/index.ts';
import type { Executor } from '../../src/service/ports.ts';
import { fakeKubeCluster, jobOnNodes, reconcileUntil } from './kube-executor-fixture.ts';

const NS = 'claim-jobs';
const cluster = fakeKubeCluster(NS);

/** One boa's executor on the cluster: its own instance id, the test's clock, its log lines kept. */
function boa(instanceId: string, now: () => number) {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const executor: Executor = createKubernetesExecutor(
    { terminationGraceSeconds: 60, kubernetes: { namespace: NS } },
    logger,
    { instanceId, now, kubeConfig: cluster.fake.kubeConfig(), sleep: async () => {}, random: () => 0.5 },
  );
  cluster.executors.push(executor);
  return { executor, lines };
}

const lease = () => cluster.fake.leases(NS).find((l) => l.metadata.name === CLAIM_LEASE_NAME);
const podNames = () =>
  cluster.fake
    .pods(NS)
    .map((p) => p.metadata.name)
    .sort();

/** Boa `a` running job 7 on the first node, its claim made at `t`. */
async function firstBoaRunning(clock: { t: number }) {
  const a = boa('boa-a', () => clock.t);
  const job = jobOnNodes(7, 1, [cluster.nodes[0]!], { gpus: 1, env: () => ({}) });
  await reconcileUntil(
    a.executor,
    [job],
    () => cluster.fake.pods(NS).some((p) => p.status?.phase === 'Running'),
    "boa a's pod running",
  );
  return { a, job };
}

describe('the jobs namespace is claimed by one boa (Lease boa-owner)', () => {
  it("a second boa on the namespace fails its pass with the holder named, and deletes none of the first's pods; the first keeps working", async () => {
    const clock = { t: Date.now() };
    const { a, job } = await firstBoaRunning(clock);
    const servicesBefore = cluster.fake.services(NS).map((s) => s.metadata.uid);
    clock.t += 30_000;
    const b = boa('boa-b', () => clock.t);
    const requestsBefore = cluster.fake.requests.length;
    // Given no jobs (all of a's would be stopped) and a job of its own: it touches nothing.
    const other = jobOnNodes(9, 1, [cluster.nodes[1]!], { gpus: 1, env: () => ({}) });
    for (const desired of [[], [other]]) {
      const pass = b.executor.reconcile(desired);
      await expect(pass).rejects.toThrow(NamespaceClaimedError);
      await expect(pass).rejects.toThrow(
        new RegExp(
          `jobs namespace ${NS} belongs to another boa \\(instance boa-a; this one is boa-b\\): its claim, lease boa-owner, was last renewed at .* \\(30 s ago\\)`,
        ),
      );
      await expect(pass).rejects.toThrow(/BOA_JOBS_NAMESPACE/);
      await expect(pass).rejects.toThrow(`kubectl -n ${NS} delete lease boa-owner`);
    }
    expect(podNames()).toEqual([podName(7, 1, 0)]);
    expect(cluster.fake.pods(NS)[0]!.metadata.deletionTimestamp).toBeUndefined();
    expect(cluster.fake.services(NS).map((s) => s.metadata.uid)).toEqual(servicesBefore);
    expect(lease()?.spec.holderIdentity).toBe('boa-a');
    // b only read: no write of its reached the API server.
    expect(cluster.fake.requests.slice(requestsBefore).filter((r) => r.method !== 'GET')).toEqual([]);

    const statuses = await a.executor.reconcile([job]);
    expect(statuses).toContainEqual(expect.objectContaining({ jobId: 7, rank: 0, phase: 'running' }));
    await a.executor.reconcile([]);
    expect(cluster.fake.pods(NS)[0]!.metadata.deletionTimestamp).toBeDefined();
  });

  it('the same boa after a restart (a new executor, the same id) keeps the namespace, and renews its claim', async () => {
    const clock = { t: Date.now() };
    const { a, job } = await firstBoaRunning(clock);
    const pod = cluster.fake.pods(NS)[0]!.metadata.uid;
    const made = lease()!;
    expect(made.spec).toMatchObject({ holderIdentity: 'boa-a', leaseDurationSeconds: CLAIM_LEASE_SECONDS });
    await a.executor.close();
    clock.t += 120_000;
    const again = boa('boa-a', () => clock.t);
    const statuses = await again.executor.reconcile([job]);
    expect(statuses).toContainEqual(expect.objectContaining({ jobId: 7, rank: 0, phase: 'running' }));
    expect(cluster.fake.pods(NS).map((p) => p.metadata.uid)).toEqual([pod]);
    const renewed = lease()!;
    expect(renewed.spec.holderIdentity).toBe('boa-a');
    expect(Date.parse(renewed.spec.renewTime)).toBe(clock.t);
    expect(renewed.spec.acquireTime).toBe(made.spec.acquireTime);
    expect(renewed.spec.leaseTransitions ?? 0).toBe(0);
    // Within the minute: read, not written again.
    const version = renewed.metadata.resourceVersion;
    clock.t += 10_000;
    await again.executor.reconcile([job]);
    expect(lease()!.metadata.resourceVersion).toBe(version);
  });

  it('takes over a claim whose renewal lapsed (its boa gone), says so in its log; the old holder, back, is refused', async () => {
    const clock = { t: Date.now() };
    const { a } = await firstBoaRunning(clock);
    const renewedAt = lease()!.spec.renewTime;
    // Within the lease's duration it is still a's.
    clock.t += (CLAIM_LEASE_SECONDS - 1) * 1000;
    const b = boa('boa-b', () => clock.t);
    await expect(b.executor.reconcile([])).rejects.toThrow(NamespaceClaimedError);
    expect(podNames()).toEqual([podName(7, 1, 0)]);

    clock.t += 2000;
    await b.executor.reconcile([]);
    expect(lease()!.spec).toMatchObject({ holderIdentity: 'boa-b', leaseTransitions: 1 });
    expect(b.lines).toContainEqual(
      expect.objectContaining({
        event: 'kube.namespace.taken-over',
        namespace: NS,
        holder: 'boa-b',
        previousHolder: 'boa-a',
        lastRenewed: new Date(renewedAt).toISOString(),
      }),
    );
    // Taken over, the namespace is b's: a's job, which b does not run, is stopped.
    expect(cluster.fake.pods(NS)[0]!.metadata.deletionTimestamp).toBeDefined();
    await expect(a.executor.reconcile([])).rejects.toThrow(/instance boa-b; this one is boa-a/);
  });

  it('of two boas racing for a lapsed claim exactly one wins; the other gets a conflict, reads again and sees the winner', async () => {
    const clock = { t: Date.now() };
    await firstBoaRunning(clock);
    clock.t += (CLAIM_LEASE_SECONDS + 1) * 1000;
    const racers = [boa('boa-b', () => clock.t), boa('boa-c', () => clock.t)];
    // Both reads of the Lease answered together: both see a's lapsed claim, at one resourceVersion.
    let reads = 0;
    let bothRead!: () => void;
    const after = new Promise<void>((resolve) => (bothRead = resolve));
    const isLeaseRead = (r: { method: string; path: string }) =>
      r.method === 'GET' && r.path.endsWith(`/leases/${CLAIM_LEASE_NAME}`);
    cluster.fake.faults.inject({
      count: 2,
      after,
      match: (r) => isLeaseRead(r) && (++reads === 2 && bothRead(), true),
    });
    const passes = await Promise.allSettled(racers.map((r) => r.executor.reconcile([])));
    const won = passes.filter((p) => p.status === 'fulfilled');
    const lost = passes.filter((p): p is PromiseRejectedResult => p.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    const winner = passes[0]!.status === 'fulfilled' ? 'boa-b' : 'boa-c';
    expect(lost[0]!.reason).toBeInstanceOf(NamespaceClaimedError);
    expect(String(lost[0]!.reason)).toContain(`instance ${winner};`);
    expect(lease()!.spec).toMatchObject({ holderIdentity: winner, leaseTransitions: 1 });
    const writes = cluster.fake.requests.filter((r) => r.method === 'PUT' && r.path.includes('/leases/'));
    expect(writes.map((r) => r.status).sort()).toEqual([200, 409]);
    expect(
      racers.flatMap((r) => r.lines).filter((l) => l.event === 'kube.namespace.taken-over'),
    ).toHaveLength(1);
  });

  it('upgrade: pods made before the claim existed (no Lease) are adopted by the first pass, which makes the Lease', async () => {
    const clock = { t: Date.now() };
    const { job } = await firstBoaRunning(clock);
    const pod = cluster.fake.pods(NS)[0]!.metadata.uid;
    // As a boa from before the claim left the namespace.
    if (lease()) cluster.fake.store.remove('leases', NS, CLAIM_LEASE_NAME);
    expect(lease()).toBeUndefined();
    const upgraded = boa('boa-upgraded', () => clock.t);
    const statuses = await upgraded.executor.reconcile([job]);
    expect(statuses).toContainEqual(expect.objectContaining({ jobId: 7, rank: 0, phase: 'running' }));
    expect(cluster.fake.pods(NS).map((p) => p.metadata.uid)).toEqual([pod]);
    expect(lease()!.spec).toMatchObject({
      holderIdentity: 'boa-upgraded',
      leaseDurationSeconds: CLAIM_LEASE_SECONDS,
    });
    expect(Date.parse(lease()!.spec.renewTime)).toBe(clock.t);
    expect(upgraded.lines).toContainEqual(expect.objectContaining({ event: 'kube.namespace.claimed' }));
  });
});
