/**
 * Each job's pods accept connections only from the same job's pods: one NetworkPolicy per job, made by
 * the executor before its pods, owned by the job's Service; the jobs namespace's own policy (the CDK
 * app's) denies every other ingress.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { networkPolicyManifests } from '../../infra/k8s/network-policies.ts';
import { networkPolicyName } from '../../src/cloud/kubernetes/names.ts';
import type { DesiredJob, ReplicaStatus } from '../../src/service/ports.ts';
import { connectionAllowed, type FakeKubeApi, type KubeObject } from '../fakes/kube-api/index.ts';
import { selects } from '../fakes/kube-api/network-policy.ts';
import { jobOnNodes, fakeKubeCluster } from './kube-executor-fixture.ts';

const NS = 'boa-jobs';
const jobOf = (o: KubeObject) => o.metadata.labels!['boa.dev/job-id'];
const JOB_LABELS = (jobId: number) => ({
  'app.kubernetes.io/managed-by': 'boa',
  'app.kubernetes.io/component': 'job',
  'boa.dev/job-id': String(jobId),
});

describe("a job's NetworkPolicy admits only the job's own pods", () => {
  const cluster = fakeKubeCluster(NS);
  const { executor } = cluster;
  let fake: FakeKubeApi;
  beforeEach(() => void (fake = cluster.fake));
  /** A replica of 2 GPUs on each node: two jobs fit on the fixture's two 4-GPU nodes. */
  const job = (jobId: number, generation: number, nodes = cluster.nodes) => {
    const env = () => ({ BOA_JOB_ID: String(jobId), BOA_JOB_TOKEN: `token-of-${jobId}` });
    return jobOnNodes(jobId, generation, nodes, { gpus: 2, env });
  };
  const policyPath = `/apis/networking.k8s.io/v1/namespaces/${NS}/networkpolicies`;
  const onPolicies = (r: { method: string; path: string }) => r.path.startsWith(policyPath);
  const policyPosts = () => fake.requests.filter((r) => r.method === 'POST' && onPolicies(r));
  const podPosts = () => fake.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/pods'));
  const live = () => fake.pods(NS).filter((p) => !p.metadata.deletionTimestamp);
  const settle = async (desired: DesiredJob[], done: () => boolean) => {
    const e = cluster.executors.at(-1)!;
    for (let i = 0; i < 100 && !done(); i++) {
      await e.reconcile(desired);
      fake.kubelet.finishTermination();
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(done()).toBe(true);
  };

  it("comes with the job's pods: selects that job only, labelled and owned by its Service, created before any pod", async () => {
    const e = executor();
    await e.reconcile([job(7, 1)]);
    const [policy, ...others] = fake.networkPolicies(NS);
    expect(others).toEqual([]);
    const [service] = fake.services(NS);
    const thisJob = { matchLabels: { 'app.kubernetes.io/managed-by': 'boa', 'boa.dev/job-id': '7' } };
    expect(policy).toMatchObject({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: {
        // Named for its Service: one made again gets its own, never the old one's.
        name: `boa-job-7-${service!.metadata.uid}`,
        namespace: NS,
        labels: JOB_LABELS(7),
        ownerReferences: [
          {
            apiVersion: 'v1',
            kind: 'Service',
            name: 'boa-job-7',
            uid: service!.metadata.uid,
            controller: true,
          },
        ],
      },
    });
    expect(policy!.spec).toEqual({
      podSelector: thisJob,
      policyTypes: ['Ingress'],
      ingress: [{ from: [{ podSelector: thisJob }] }],
    });
    // A DNS-1123 name (a label, even) for the largest job id (15 digits).
    const largest = networkPolicyName(999_999_999_999_999, service!.metadata.uid);
    expect(largest).toMatch(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/);
    // Both selectors name the job's pods.
    for (const pod of fake.pods(NS)) {
      expect(selects(policy!.spec.podSelector, pod.metadata.labels!)).toBe(true);
      expect(selects(policy!.spec.ingress[0].from[0].podSelector, pod.metadata.labels!)).toBe(true);
    }
    // The order of creation: the namespace's claim (the first pass's), the Service (its owner), the
    // policy, then the Secret and the pods.
    const created = fake.requests.filter((r) => r.status === 201).map((r) => r.path.split('/').pop());
    expect(created).toEqual(['leases', 'services', 'networkpolicies', 'secrets', 'pods', 'pods']);

    // A new generation creates pods again: the policy, watched, is neither sent again nor changed.
    await settle(
      [job(7, 2, cluster.nodes.slice(0, 1))],
      () =>
        live()
          .map((p) => p.metadata.name)
          .join() === 'boa-job-7-g2-r0',
    );
    expect(policyPosts().map((r) => r.status)).toEqual([201]);
    const written = (r: { method: string }) => !['GET', 'POST'].includes(r.method);
    expect(fake.requests.filter((r) => onPolicies(r) && written(r))).toEqual([]);
    expect(fake.networkPolicies(NS)).toHaveLength(1);
  });

  it("two jobs get two policies, and neither's selects the other's pods; with the namespace's policy, only a job's own pods connect", async () => {
    executor();
    await settle([job(1, 1), job(2, 1)], () => live().length === 4);
    const policies = fake.networkPolicies(NS);
    const named = fake.services(NS).map((s) => `${s.metadata.name}-${s.metadata.uid}`);
    expect(policies.map((p) => p.metadata.name).sort()).toEqual(named.sort());
    const pods = fake.pods(NS);
    for (const policy of policies) {
      const selected = pods.filter((p) => selects(policy.spec.podSelector, p.metadata.labels!));
      const admitted = pods.filter((p) =>
        selects(policy.spec.ingress[0].from[0].podSelector, p.metadata.labels!),
      );
      const own = pods.filter((p) => jobOf(p) === jobOf(policy));
      expect(selected).toEqual(own);
      expect(admitted).toEqual(own);
      expect(own).toHaveLength(2);
    }
    // As an enforcing CNI decides, with the CDK app's policy for the namespace beside the jobs'.
    const namespacePolicies = networkPolicyManifests({ jobsNamespace: NS, exposed: false }).filter(
      (m: any) => m.metadata.namespace === NS,
    ) as unknown as KubeObject[];
    const all = [...policies, ...namespacePolicies];
    const ref = (p: KubeObject) => ({ namespace: NS, labels: p.metadata.labels! });
    for (const from of pods) {
      for (const to of pods.filter((p) => p !== from)) {
        const sameJob = jobOf(from) === jobOf(to);
        expect(
          connectionAllowed(all, ref(from), ref(to)),
          `${from.metadata.name} -> ${to.metadata.name}`,
        ).toBe(sameJob);
      }
      // Another pod of the namespace (not a job's) reaches no job's pod.
      const stranger = { namespace: NS, labels: { app: 'debug' } };
      expect(connectionAllowed(all, stranger, ref(from))).toBe(false);
      // A pod an older boa made (no boa.dev/network label) keeps the namespace's reach it started with,
      // so a deploy does not cut its job's peers off before the new boa made the job's policy.
      const { ['boa.dev/network']: _, ...older } = from.metadata.labels!;
      expect(connectionAllowed(all, stranger, { namespace: NS, labels: older })).toBe(true);
    }
  });

  it('a forgotten job: its Service goes and the garbage collector takes the policy (boa sends no DELETE)', async () => {
    const e = executor();
    await settle([job(3, 1)], () => live().length === 2);
    expect(fake.networkPolicies(NS)).toHaveLength(1);
    await settle([], () => fake.services(NS).length === 0 && fake.pods(NS).length === 0);
    await e.reconcile([]);
    expect(fake.networkPolicies(NS)).toEqual([]);
    expect(fake.requests.filter((r) => r.method === 'DELETE' && onPolicies(r))).toEqual([]);
  });

  it('a 503 is retried; a create failing every attempt creates no pod, and the next pass makes both', async () => {
    const post = (r: { method: string; path: string }) => r.method === 'POST' && onPolicies(r);
    fake.faults.inject({ status: 503, count: 1, match: post });
    const e = executor();
    await e.reconcile([job(1, 1)]);
    expect(policyPosts().map((r) => r.status)).toEqual([503, 201]);
    expect(cluster.delays).toHaveLength(1);
    expect(live()).toHaveLength(2);

    fake.faults.inject({ status: 503, count: 4, match: post });
    const statuses = await e.reconcile([job(1, 1), job(2, 1)]);
    expect(statuses.filter((s) => s.jobId === 2)).toEqual([]);
    expect(podPosts().filter((r) => r.status === 201)).toHaveLength(2);
    expect(fake.networkPolicies(NS).map((p) => jobOf(p))).toEqual(['1']);
    const before = fake.requests.length;
    await e.reconcile([job(1, 1), job(2, 1)]);
    const created = fake.requests
      .slice(before)
      .filter((r) => r.status === 201)
      .map((r) => r.path.split('/').pop());
    expect(created).toEqual(['networkpolicies', 'secrets', 'pods', 'pods']);
  });

  it("a policy the API server refuses (a quota's 403) fails the replicas with its reason and creates no pod; an RBAC 403 fails only the step", async () => {
    const forbid = (message: string) =>
      fake.faults.inject({
        status: 403,
        reason: 'Forbidden',
        message,
        match: (r) => r.method === 'POST' && onPolicies(r),
      });
    const quota =
      'networkpolicies.networking.k8s.io "boa-job-1" is forbidden: exceeded quota: objects, requested: count/networkpolicies.networking.k8s.io=1, used: count/networkpolicies.networking.k8s.io=5, limited: count/networkpolicies.networking.k8s.io=5';
    forbid(quota);
    const e = executor();
    const statuses: readonly ReplicaStatus[] = await e.reconcile([job(1, 1)]);
    expect(statuses.map((s) => [s.rank, s.phase])).toEqual([
      [0, 'failed'],
      [1, 'failed'],
    ]);
    expect(statuses[0]?.reason).toMatch(/network policy rejected by the API server.*exceeded quota/s);
    expect(podPosts()).toEqual([]);

    // boa's own permissions (a Role without networkpolicies): no replica fails, and no pod is made.
    const rbac =
      'networkpolicies.networking.k8s.io is forbidden: User "system:serviceaccount:boa:boa" cannot create resource "networkpolicies" in API group "networking.k8s.io" in the namespace "boa-jobs"';
    forbid(rbac);
    expect(await e.reconcile([job(2, 1)])).toEqual([]);
    expect(podPosts()).toEqual([]);
  });

  it('a job running since before boa made policies (an upgrade) gets its policy once, at the first pass', async () => {
    const e = executor();
    await settle([job(4, 1)], () => live().length === 2);
    // As a cluster where boa ran before it made policies: the job runs without one.
    for (const policy of fake.networkPolicies(NS))
      fake.store.remove('networkpolicies', NS, policy.metadata.name);
    await e.close();
    const upgraded = executor();
    await upgraded.reconcile([job(4, 1)]);
    await upgraded.reconcile([job(4, 1)]);
    expect(fake.networkPolicies(NS).map((p) => jobOf(p))).toEqual(['4']);
    // One create at the first pass, none at the next.
    expect(policyPosts().map((r) => r.status)).toEqual([201, 201]);
    expect(podPosts().filter((r) => r.status === 201)).toHaveLength(2);
  });
  it('a policy deleted while its job runs is made again at the next pass', async () => {
    const e = executor();
    await settle([job(6, 1)], () => live().length === 2);
    const [made] = fake.networkPolicies(NS);
    fake.store.remove('networkpolicies', NS, made!.metadata.name);
    await settle([job(6, 1)], () => fake.networkPolicies(NS).length === 1);
    expect(fake.networkPolicies(NS)[0]!.metadata.name).toBe(made!.metadata.name);
    // The pods ran on: nothing but the policy was made again.
    expect(podPosts().filter((r) => r.status === 201)).toHaveLength(2);
    await e.reconcile([job(6, 1)]);
    expect(policyPosts().map((r) => r.status)).toEqual([201, 201]);
  });

  it("a job's Service made again before the collector took the old one's objects: the new Service gets its own policy and Secret", async () => {
    executor();
    await settle([job(5, 1)], () => live().length === 2);
    const [old] = fake.services(NS);
    // The job left and came back (a restart's backoff) while the garbage collector lagged: its pods and
    // Service went, the policy and Secret of the old Service are still there.
    for (const pod of fake.pods(NS)) fake.store.remove('pods', NS, pod.metadata.name);
    fake.store.remove('services', NS, old!.metadata.name, { propagationPolicy: 'Orphan' });
    expect(fake.networkPolicies(NS)).toHaveLength(1);
    expect(fake.secrets(NS)).toHaveLength(1);
    await settle(
      [job(5, 2)],
      () => live().length === 2 && live().every((p) => p.status?.phase === 'Running'),
    );
    const [service] = fake.services(NS);
    expect(service!.metadata.uid).not.toBe(old!.metadata.uid);
    // The collector catches up: what the old Service owned goes.
    for (const policy of fake.networkPolicies(NS))
      if (policy.metadata.name.endsWith(old!.metadata.uid))
        fake.store.remove('networkpolicies', NS, policy.metadata.name);
    for (const secret of fake.secrets(NS))
      if (secret.metadata.name.endsWith(old!.metadata.uid))
        fake.store.remove('secrets', NS, secret.metadata.name);
    await settle([job(5, 2)], () => true);
    expect(fake.networkPolicies(NS).map((p) => p.metadata.name)).toEqual([
      `boa-job-5-${service!.metadata.uid}`,
    ]);
    expect(fake.secrets(NS).map((p) => p.metadata.name)).toEqual([
      `boa-job-5-token-${service!.metadata.uid}`,
    ]);
    for (const pod of live()) {
      expect(fake.kubelet.environment(pod.metadata.name)?.BOA_JOB_TOKEN).toBe('token-of-5');
    }
  });
});
