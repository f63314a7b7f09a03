/**
 * The job's token (BOA_JOB_TOKEN) reaches its pods through a Secret owned by the job's Service, never as
 * a plain value in the pod spec, which anyone who may get pods in the jobs namespace reads.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { DesiredJob, Executor, ReplicaStatus } from '../../src/service/ports.ts';
import type { FakeKubeApi, KubeObject } from '../fakes/kube-api/index.ts';
import { jobOnNodes, fakeKubeCluster } from './kube-executor-fixture.ts';

const NS = 'boa-jobs';
const TOKEN = 'tok-Q2hhbmdlTWVPbmx5SW5UZXN0cy0wMTIzNDU2Nzg5';

function job(generation: number, nodes: readonly string[], jobId = 1): DesiredJob {
  const env = (rank: number) => ({
    BOA_JOB_ID: String(jobId),
    BOA_JOB_TOKEN: TOKEN,
    NODE_RANK: String(rank),
  });
  return jobOnNodes(jobId, generation, nodes, { gpus: 4, env });
}

describe("the job's token in a Secret owned by its Service", () => {
  const cluster = fakeKubeCluster(NS);
  const { executor } = cluster;
  let fake: FakeKubeApi;
  /** The job's Secret: named for its Service (its uid). */
  const secretOf = (jobId: number) =>
    `boa-job-${jobId}-token-${fake.services(NS).find((v) => v.metadata.name === `boa-job-${jobId}`)!.metadata.uid}`;
  let nodes: string[];
  let delays: number[];
  beforeEach(() => void ({ fake, nodes, delays } = cluster));
  const posts = (resource: string) =>
    fake.requests.filter((r) => r.method === 'POST' && r.path === `/api/v1/namespaces/${NS}/${resource}`);
  const podNames = () =>
    fake
      .pods(NS)
      .map((p) => p.metadata.name)
      .sort();
  const until = async (
    e: Executor,
    desired: DesiredJob[],
    done: (s: readonly ReplicaStatus[]) => boolean,
  ) => {
    let statuses: readonly ReplicaStatus[] = [];
    for (let i = 0; i < 100 && !done(statuses); i++) {
      statuses = await e.reconcile(desired);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(done(statuses)).toBe(true);
    return statuses;
  };

  it('no pod holds the token: each reads it from the Secret, which the fake kubelet resolves', async () => {
    const e = executor();
    await until(e, [job(1, nodes)], (s) => s.length === 2 && s.every((r) => r.phase === 'running'));
    for (const pod of fake.pods(NS)) {
      const serialized = JSON.stringify(pod);
      expect(serialized).not.toContain(TOKEN);
      expect(serialized).not.toContain(Buffer.from(TOKEN).toString('base64'));
      const env = pod.spec.containers[0].env as { name: string; value?: string; valueFrom?: unknown }[];
      expect(env.find((v) => v.name === 'BOA_JOB_TOKEN')).toEqual({
        name: 'BOA_JOB_TOKEN',
        valueFrom: { secretKeyRef: { name: secretOf(1), key: 'token' } },
      });
      expect(env.find((v) => v.name === 'BOA_JOB_ID')).toEqual({ name: 'BOA_JOB_ID', value: '1' });
      // What the container got: the token, from the Secret.
      expect(fake.kubelet.environment(pod.metadata.name)).toMatchObject({
        BOA_JOB_TOKEN: TOKEN,
        BOA_JOB_ID: '1',
      });
    }
  });

  it('the Secret holds only the token, labelled as the job, owned by its Service; gone with the Service', async () => {
    const e = executor();
    await e.reconcile([job(1, nodes)]);
    const [service] = fake.services(NS);
    const [secret, ...others] = fake.secrets(NS) as (KubeObject & { data?: Record<string, string> })[];
    expect(others).toEqual([]);
    expect(secret).toMatchObject({ type: 'Opaque', immutable: true });
    expect(secret!.metadata).toMatchObject({
      name: secretOf(1),
      labels: {
        'app.kubernetes.io/managed-by': 'boa',
        'app.kubernetes.io/component': 'job',
        'boa.dev/job-id': '1',
      },
      ownerReferences: [
        {
          apiVersion: 'v1',
          kind: 'Service',
          name: 'boa-job-1',
          uid: service!.metadata.uid,
          controller: true,
        },
      ],
    });
    expect(Object.keys(secret!.data!)).toEqual(['token']);
    expect(Buffer.from(secret!.data!.token!, 'base64').toString()).toBe(TOKEN);

    // A rescale creates pods again: the Secret is ensured first (AlreadyExists), never doubled.
    await e.reconcile([job(2, nodes.slice(0, 1))]);
    fake.kubelet.finishTermination();
    await until(e, [job(2, nodes.slice(0, 1))], () => podNames().join() === 'boa-job-1-g2-r0');
    expect(posts('secrets').map((r) => r.status)).toEqual([201, 409]);

    // The job is forgotten: its pods go, then its Service, and the Secret with it.
    await e.reconcile([]);
    fake.kubelet.finishTermination();
    await until(e, [], () => fake.services(NS).length === 0);
    expect(fake.secrets(NS)).toEqual([]);
    expect(fake.requests.filter((r) => r.method === 'DELETE' && r.path.includes('/secrets/'))).toEqual([]);
  });

  it('a failing Secret create is retried; no pod is created before its Secret exists', async () => {
    const onSecrets = (r: { method: string; path: string }) =>
      r.method === 'POST' && r.path.endsWith('/secrets');
    // Once: retried within the step.
    fake.faults.inject({ status: 503, count: 1, match: onSecrets });
    const e = executor();
    await e.reconcile([job(1, nodes)]);
    expect(posts('secrets').map((r) => r.status)).toEqual([503, 201]);
    expect(delays).toHaveLength(1);
    const order = fake.requests.filter((r) => r.status === 201).map((r) => r.path.split('/').pop());
    expect(order).toEqual(['leases', 'services', 'networkpolicies', 'secrets', 'pods', 'pods']);

    // Every attempt fails: the step fails (no pod), and the next reconcile creates both, Secret first.
    const second = job(1, nodes, 2);
    fake.faults.inject({ status: 503, count: 4, match: onSecrets });
    const statuses = await e.reconcile([second]);
    expect(statuses.filter((s) => s.jobId === 2)).toEqual([]);
    expect(fake.pods(NS).filter((p) => p.metadata.name.startsWith('boa-job-2-'))).toEqual([]);
    expect(fake.secrets(NS).map((s) => s.metadata.name)).toEqual([secretOf(1)]);
    const before = fake.requests.length;
    await e.reconcile([second]);
    const created = fake.requests
      .slice(before)
      .filter((r) => r.status === 201)
      .map((r) => r.path.split('/').pop());
    expect(created).toEqual(['secrets', 'pods', 'pods']);
    expect(podNames().filter((n) => n.startsWith('boa-job-2-'))).toHaveLength(2);
  });

  it('a Secret the API server refuses fails the replicas with its reason, and creates no pod', async () => {
    const quota =
      'secrets "boa-job-1-token" is forbidden: exceeded quota: objects, requested: secrets=1, used: secrets=10, limited: secrets=10';
    fake.faults.inject({
      status: 403,
      reason: 'Forbidden',
      message: quota,
      match: (r) => r.method === 'POST' && r.path.endsWith('/secrets'),
    });
    const e = executor();
    const statuses = await e.reconcile([job(1, nodes)]);
    expect(statuses.map((s) => [s.rank, s.phase])).toEqual([
      [0, 'failed'],
      [1, 'failed'],
    ]);
    expect(statuses[0]?.reason).toMatch(/token secret rejected.*exceeded quota/s);
    expect(posts('pods')).toEqual([]);
  });

  it('the Service deleted while its Secret is created: the Secret is collected, as the pods are', async () => {
    // As a real API server can answer: the executor's Service is gone by the time the Secret is written.
    const store = fake.store;
    const create = store.create.bind(store);
    let raced = false;
    store.create = (resource, namespace, body) => {
      if (resource === 'secrets' && !raced) {
        raced = true;
        store.remove('services', NS, 'boa-job-1');
      }
      return create(resource, namespace, body);
    };
    const e = executor();
    await e.reconcile([job(1, nodes)]);
    expect(raced).toBe(true);
    await new Promise((r) => setTimeout(r, 20));
    expect(fake.secrets(NS)).toEqual([]);
    expect(fake.pods(NS).filter((p) => !p.metadata.deletionTimestamp)).toEqual([]);
    fake.kubelet.finishTermination();
    // Later passes make the job's objects again (a new generation, as the service would start, if the
    // pods were seen to vanish).
    let generation = 1;
    let statuses: readonly ReplicaStatus[] = [];
    const running = () => statuses.length === 2 && statuses.every((r) => r.phase === 'running');
    for (let i = 0; i < 100 && !running(); i++) {
      if (statuses.some((r) => r.interrupted)) generation++;
      statuses = await e.reconcile([job(generation, nodes)]);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(statuses.map((r) => r.phase)).toEqual(['running', 'running']);
    const [service] = fake.services(NS);
    expect(fake.secrets(NS)[0]?.metadata.ownerReferences?.[0]?.uid).toBe(service?.metadata.uid);
  });
});
