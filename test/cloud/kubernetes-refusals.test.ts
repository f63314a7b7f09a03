import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createKubernetesExecutor } from '../../src/cloud/kubernetes/index.ts';
import type { DesiredJob, Executor, Workload } from '../../src/service/ports.ts';
import { type Fault, type FakeKubeApi, startFakeKubeApi } from '../fakes/kube-api/index.ts';
import { captureLogs } from './fake-time.ts';

/**
 * Which refusals of a pod's create fail its replica (so its job restarts, counted): only the pod's own
 * (422, a quota's or admission's 403). boa's credentials refused (401, an RBAC 403) fail the step, and
 * the next reconcile creates the pod; no restart is used up by a blip of the authenticator.
 */
const NS = 'boa-jobs';
const workload: Workload = { image: 'repo/train:1', command: ['python3', 'train.py'] };
const RBAC_DENIAL =
  'pods is forbidden: User "system:serviceaccount:boa:boa" cannot create resource "pods" in API group "" in the namespace "boa-jobs"';
const QUOTA_DENIAL =
  'pods "boa-job-4-g1-r0" is forbidden: exceeded quota: gpus, requested: requests.nvidia.com/gpu=4, used: requests.nvidia.com/gpu=8, limited: requests.nvidia.com/gpu=8';

function job(jobId: number, node: string): DesiredJob {
  return {
    jobId,
    generation: 1,
    replicas: [{ jobId, generation: 1, rank: 0, node, gpus: 4, workload, env: {} }],
  };
}

describe('Kubernetes executor: refusals of a pod create', () => {
  let fake: FakeKubeApi;
  let node: string;
  let logs: ReturnType<typeof captureLogs>;
  const executors: Executor[] = [];

  const executor = () => {
    const created = createKubernetesExecutor(
      { terminationGraceSeconds: 60, kubernetes: { namespace: NS } },
      logs.logger,
      {
        instanceId: 'test-boa',
        kubeConfig: fake.kubeConfig(),
        sleep: async () => undefined,
        random: () => 0.5,
      },
    );
    executors.push(created);
    return created;
  };
  const refuseCreate = (fault: Omit<Fault, 'match'>) =>
    fake.faults.inject({ ...fault, match: (r) => r.method === 'POST' && r.path.endsWith('/pods') });
  const podPosts = () => fake.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/pods'));
  const podNames = () => fake.pods(NS).map((p) => p.metadata.name);

  beforeEach(async () => {
    // Pods stay Pending (no kubelet starting them): a replica is 'starting' unless it failed.
    fake = await startFakeKubeApi();
    node = fake.kubelet.addNode().metadata.name;
    logs = captureLogs();
  });
  afterEach(async () => {
    for (const e of executors.splice(0)) await e.close();
    await fake.close();
  });

  it('a 401 for a moment is retried in the call: the pod is created, no replica fails', async () => {
    refuseCreate({ status: 401, reason: 'Unauthorized', count: 1 });
    const statuses = await executor().reconcile([job(1, node)]);
    expect(statuses.map((r) => [r.jobId, r.rank, r.phase])).toEqual([[1, 0, 'starting']]);
    expect(podPosts().map((r) => r.status)).toEqual([401, 201]);
  });

  it('a 401 that outlasts the retries fails the step, not the replica; the next reconcile creates the pod', async () => {
    refuseCreate({ status: 401, reason: 'Unauthorized', count: 4 });
    const e = executor();
    expect(await e.reconcile([job(2, node)])).toEqual([]);
    expect(podPosts()).toHaveLength(4); // bounded: the policy's attempts
    expect(logs.events()).toContain('kube.reconcile.failed');
    expect(logs.events()).not.toContain('kube.pod.rejected');
    const statuses = await e.reconcile([job(2, node)]);
    expect(statuses.map((r) => [r.jobId, r.rank, r.phase])).toEqual([[2, 0, 'starting']]);
  });

  it("an RBAC 403 (boa's own permissions) fails the step, not the replica, and is not retried in the call", async () => {
    refuseCreate({ status: 403, reason: 'Forbidden', message: RBAC_DENIAL, count: 1 });
    const e = executor();
    expect(await e.reconcile([job(3, node)])).toEqual([]);
    expect(podPosts()).toHaveLength(1);
    expect(logs.events()).not.toContain('kube.pod.rejected');
    await e.reconcile([job(3, node)]);
    expect(podNames()).toEqual(['boa-job-3-g1-r0']);
  });

  it("a quota's 403 is waited out: the replica is starting, with the quota's words, and its pod made once the quota passes", async () => {
    // Another job's pods in their grace still count against a GPU quota: it passes once they are gone.
    refuseCreate({ status: 403, reason: 'Forbidden', message: QUOTA_DENIAL, count: 2 });
    const e = executor();
    for (let pass = 0; pass < 2; pass++) {
      const [status] = await e.reconcile([job(4, node)]);
      expect(status).toEqual({
        jobId: 4,
        generation: 1,
        rank: 0,
        node,
        phase: 'starting',
        reason:
          'waiting for quota: exceeded quota: gpus, requested: requests.nvidia.com/gpu=4, used: requests.nvidia.com/gpu=8, limited: requests.nvidia.com/gpu=8',
      });
      expect([...(e.outage?.() ?? [])]).toEqual([]);
    }
    expect(logs.events().filter((event) => event === 'kube.pod.quota')).toHaveLength(1);
    const statuses = await e.reconcile([job(4, node)]);
    expect(statuses.map((r) => [r.jobId, r.rank, r.phase, r.reason])).toEqual([
      [4, 0, 'starting', undefined],
    ]);
    expect(podNames()).toEqual(['boa-job-4-g1-r0']);
  });

  it('a replica waiting for quota and then refused is reported once, failed', async () => {
    refuseCreate({ status: 403, reason: 'Forbidden', message: QUOTA_DENIAL, count: 1 });
    const e = executor();
    expect((await e.reconcile([job(6, node)])).map((r) => r.phase)).toEqual(['starting']);
    refuseCreate({
      status: 422,
      reason: 'Invalid',
      message: 'spec.containers[0].image: Required value',
      count: 1,
    });
    const statuses = await e.reconcile([job(6, node)]);
    expect(statuses.map((r) => [r.rank, r.phase])).toEqual([[0, 'failed']]);
  });

  it('a create refused for a reason its job is not to blame for (503 past the retries) is an outage for that job, until it passes', async () => {
    refuseCreate({ status: 503, reason: 'ServiceUnavailable', count: 4 });
    const e = executor();
    expect(await e.reconcile([job(5, node)])).toEqual([]);
    expect([...(e.outage?.() ?? [])]).toEqual([5]);
    await e.reconcile([job(5, node)]);
    expect([...(e.outage?.() ?? [])]).toEqual([]);
    expect(podNames()).toEqual(['boa-job-5-g1-r0']);
  });

  // Found in review (2026-12-06): a Service refused failed only the step, each pass, and the job waited
  // out its start deadline ("no replica was made") at every restart, as no refused Secret or policy did.
  it("the job's Service refused (an admission check's or a quota's 403) fails its replicas with the reason and makes no pod; an RBAC 403 fails only the step", async () => {
    const refuseService = (message: string) =>
      fake.faults.inject({
        status: 403,
        reason: 'Forbidden',
        message,
        match: (r) => r.method === 'POST' && r.path.endsWith('/services'),
      });
    const e = executor();
    refuseService(
      'services "boa-job-5" is forbidden: exceeded quota: objects, requested: services=1, used: services=10, limited: services=10',
    );
    const quota = await e.reconcile([job(5, node)]);
    expect(quota.map((r) => [r.jobId, r.rank, r.phase])).toEqual([[5, 0, 'failed']]);
    expect(quota[0]?.reason).toMatch(/^job service rejected by the API server: .*exceeded quota: objects/s);
    refuseService(
      'admission webhook "validate.kyverno.svc" denied the request: services must be labelled team',
    );
    const admission = await e.reconcile([job(5, node), job(6, node)]);
    expect(admission.find((r) => r.jobId === 6)?.reason).toMatch(/kyverno.*must be labelled team/s);
    // Refused for its generation: not asked for again, its pods never made.
    expect(podPosts()).toEqual([]);
    expect(fake.services(NS)).toEqual([]);
    expect(logs.events().filter((event) => event === 'kube.service.rejected')).toHaveLength(2);

    refuseService(
      'services is forbidden: User "system:serviceaccount:boa:boa" cannot create resource "services" in API group "" in the namespace "boa-jobs"',
    );
    expect(await e.reconcile([job(7, node)])).toEqual([]);
    expect(podPosts()).toEqual([]);
    expect(podNames()).toEqual([]);
    // The next pass makes it.
    await e.reconcile([job(7, node)]);
    expect(podNames()).toEqual(['boa-job-7-g1-r0']);
  });

  // Found in review: these writes come before the pod's, and a failure there ran the job's start
  // deadline on, so an outage longer than it failed the generation as the job's fault.
  for (const [what, suffix] of [
    ['token Secret', '/secrets'],
    ['Service', '/services'],
    ['NetworkPolicy', '/networkpolicies'],
  ] as const) {
    it(`the job's ${what} create failing 503 past the retries is an outage for it, as a pod create's is`, async () => {
      fake.faults.inject({
        status: 503,
        reason: 'ServiceUnavailable',
        count: 4,
        match: (r) => r.method === 'POST' && r.path.endsWith(suffix),
      });
      const e = executor();
      const withToken = { ...job(5, node) };
      withToken.replicas = withToken.replicas.map((r) => ({ ...r, env: { BOA_JOB_TOKEN: 'tok' } }));
      await e.reconcile([withToken]);
      expect(podNames()).toEqual([]);
      expect([...(e.outage?.() ?? [])]).toEqual([5]);
      await e.reconcile([withToken]);
      expect([...(e.outage?.() ?? [])]).toEqual([]);
      expect(podNames()).toEqual(['boa-job-5-g1-r0']);
    });
  }
});
