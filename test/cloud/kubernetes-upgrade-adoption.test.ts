import { CoreV1Api, NetworkingV1Api } from '@kubernetes/client-node';
import { describe, expect, it, vi } from 'vitest';
import type { DesiredJob } from '../../src/service/ports.ts';
import { fakeKubeCluster, jobOnNodes } from './kube-executor-fixture.ts';
import { olderJobObjects } from './kubernetes-older-objects.ts';

/**
 * An upgrade in place with the Kubernetes executor: a running job's pod, Service, Secret and
 * NetworkPolicy as the boa of 2026-11-30 made them, and no Lease (it made none), are found by today's
 * executor, which keeps the pod running (no restart), makes nothing twice, and removes it all once the
 * job is gone. Made through the real client as that boa made them.
 */
const NS = 'boa-jobs';
const OBJECTS = ['pods', 'services', 'secrets', 'networkpolicies'];

describe('upgrading in place: objects made by an older boa', () => {
  const cluster = fakeKubeCluster(NS);

  async function olderBoaRan(): Promise<{ node: string; serviceUid: string; podUid: string }> {
    const node = cluster.nodes[0]!;
    const kc = cluster.fake.kubeConfig(NS);
    const core = kc.makeApiClient(CoreV1Api);
    const older = olderJobObjects(NS, node);
    const service = await core.createNamespacedService({ namespace: NS, body: older.service });
    const serviceUid = service.metadata!.uid!;
    await kc
      .makeApiClient(NetworkingV1Api)
      .createNamespacedNetworkPolicy({ namespace: NS, body: older.networkPolicy(serviceUid) });
    await core.createNamespacedSecret({ namespace: NS, body: older.secret(serviceUid) });
    const pod = await core.createNamespacedPod({ namespace: NS, body: older.pod(serviceUid) });
    await vi.waitFor(() => expect(cluster.fake.pods(NS)[0]?.status?.phase).toBe('Running'), {
      timeout: 20_000,
    });
    return { node, serviceUid, podUid: pod.metadata!.uid! };
  }

  /** The writes (not reads) to a job's objects since request `from`, as "METHOD resource". */
  const writesSince = (from: number) =>
    cluster.fake.requests
      .slice(from)
      .filter((r) => r.method !== 'GET')
      .map((r) => `${r.method} ${r.path.split('/').slice(-2).join('/')}`)
      .filter((w) => OBJECTS.some((o) => w.includes(o)));

  it('keeps the running pod (no restart), makes no second Service, Secret or policy, and makes the Lease', async () => {
    const { node, serviceUid, podUid } = await olderBoaRan();
    const from = cluster.fake.requests.length;
    const upgraded = cluster.executor();
    const job: DesiredJob = jobOnNodes(1, 1, [node], { gpus: 4, env: () => ({}) });
    for (let pass = 0; pass < 3; pass++) {
      const statuses = await upgraded.reconcile([job]);
      expect(statuses).toEqual([
        expect.objectContaining({ jobId: 1, generation: 1, rank: 0, node, phase: 'running' }),
      ]);
    }
    expect(cluster.fake.pods(NS).map((p) => [p.metadata.name, p.metadata.uid])).toEqual([
      ['boa-job-1-g1-r0', podUid],
    ]);
    expect(writesSince(from)).toEqual([]);
    expect(cluster.fake.services(NS).map((s) => s.metadata.uid)).toEqual([serviceUid]);
    expect(cluster.fake.secrets(NS).map((s) => s.metadata.name)).toEqual([`boa-job-1-token-${serviceUid}`]);
    expect(cluster.fake.networkPolicies(NS).map((p) => [p.metadata.name, p.spec.ingress])).toEqual([
      [`boa-job-1-${serviceUid}`, [{ from: [{ podSelector: { matchLabels: expect.any(Object) } }] }]],
    ]);
    expect(cluster.fake.leases(NS).map((l) => l.spec.holderIdentity)).toEqual(['test-boa']);
  });

  it("its next generation (a rescale after the upgrade) replaces the pod and runs with the older boa's Service, Secret and policy", async () => {
    const { node, serviceUid, podUid } = await olderBoaRan();
    const upgraded = cluster.executor();
    // The job's token is the same after the upgrade (derived from its seed and boa's key).
    const env = () => ({ BOA_JOB_TOKEN: 'job-token-of-the-older-boa' });
    const next: DesiredJob = jobOnNodes(1, 2, [node, cluster.nodes[1]!], { gpus: 2, env });
    await vi.waitFor(
      async () => {
        const statuses = await upgraded.reconcile([next]);
        cluster.fake.kubelet.finishTermination();
        expect(statuses.map((s) => `${s.generation}/${s.rank} ${s.phase}`).sort()).toEqual([
          '2/0 running',
          '2/1 running',
        ]);
      },
      { timeout: 20_000, interval: 20 },
    );
    expect(cluster.fake.pods(NS).map((p) => p.metadata.uid)).not.toContain(podUid);
    expect(cluster.fake.services(NS).map((s) => s.metadata.uid)).toEqual([serviceUid]);
    const secret = `boa-job-1-token-${serviceUid}`;
    expect(cluster.fake.secrets(NS).map((s) => s.metadata.name)).toEqual([secret]);
    expect(cluster.fake.networkPolicies(NS)).toHaveLength(1);
    // Each new pod reads the token from the older boa's Secret (not made again: it exists).
    for (const pod of cluster.fake.pods(NS))
      expect(cluster.fake.kubelet.environment(pod.metadata.name)?.BOA_JOB_TOKEN).toBe(
        'job-token-of-the-older-boa',
      );
  });

  it('the job gone (cancelled after the upgrade): its pod is stopped, then its Service, Secret and policy go', async () => {
    await olderBoaRan();
    const count = () => OBJECTS.map((o) => [o, cluster.fake.store.list(o as never, NS).length]);
    expect(count()).toEqual(OBJECTS.map((o) => [o, 1]));
    const upgraded = cluster.executor();
    await vi.waitFor(
      async () => {
        await upgraded.reconcile([]);
        cluster.fake.kubelet.finishTermination();
        expect(count()).toEqual(OBJECTS.map((o) => [o, 0]));
      },
      { timeout: 20_000, interval: 20 },
    );
  });
});
