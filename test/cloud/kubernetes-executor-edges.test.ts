/**
 * Edges of the Kubernetes executor that a real API server reaches and the fake's defaults do not: a
 * finished pod deleted in the second it ended, a deletion with a shorter grace than the pod's own, and
 * objects labelled as boa's that are not a job's.
 */
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { coreApi } from '../../src/cloud/kubernetes/client.ts';
import { createKubernetesExecutor } from '../../src/cloud/kubernetes/index.ts';
import type { DesiredJob, Executor, ReplicaStatus } from '../../src/service/ports.ts';
import { type FakeKubeApi, startFakeKubeApi } from '../fakes/kube-api/index.ts';

const NS = 'boa-jobs';
let fake: FakeKubeApi | undefined;
let executor: Executor | undefined;
afterEach(async () => {
  await executor?.close();
  await fake?.close();
  executor = undefined;
  fake = undefined;
});

const job = (generation: number, node: string): DesiredJob => ({
  jobId: 1,
  generation,
  replicas: [
    {
      jobId: 1,
      generation,
      rank: 0,
      node,
      gpus: 4,
      env: {},
      workload: { image: 'repo/train:1', command: ['python3', 'train.py'] },
    },
  ],
});

function executorOn(api: FakeKubeApi, config: Record<string, unknown>, now?: () => number): Executor {
  return createKubernetesExecutor({ ...config, kubernetes: { namespace: NS } }, pino({ level: 'silent' }), {
    instanceId: 'test-boa',
    kubeConfig: api.kubeConfig(),
    sleep: async () => {},
    random: () => 0.5,
    ...(now ? { now } : {}),
  });
}

async function untilRunning(on: Executor, desired: DesiredJob): Promise<void> {
  let statuses: readonly ReplicaStatus[] = [];
  for (let i = 0; i < 100 && statuses[0]?.phase !== 'running'; i++) {
    statuses = await on.reconcile([desired]);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  expect(statuses[0]?.phase).toBe('running');
}

describe('the Kubernetes executor, at the edges', () => {
  it("reports rank 0's exit 0 when boa deletes its finished pod in the second it ended", async () => {
    // The real API server stamps times to the second and answers the DELETE of a finished pod with
    // deletionTimestamp now and grace 0: its exit and its deletion then read as the same instant.
    const api = await startFakeKubeApi({
      kubelet: { autoStartMs: 0 },
      now: () => Math.floor(Date.now() / 1000) * 1000,
    });
    fake = api;
    type Removed = { status?: { phase?: string }; metadata: Record<string, unknown> };
    type Remove = (resource: string, ns: string, name: string, options: unknown) => Removed;
    const store = (api as unknown as { store: { remove: Remove; now: () => number } }).store;
    const remove = store.remove.bind(store);
    store.remove = (resource: string, ns: string, name: string, options: unknown) => {
      const gone = remove(resource, ns, name, options);
      if (resource === 'pods' && ['Succeeded', 'Failed'].includes(gone.status?.phase ?? '')) {
        gone.metadata.deletionTimestamp = new Date(store.now()).toISOString();
        gone.metadata.deletionGracePeriodSeconds = 0;
      }
      return gone;
    };
    const node = api.kubelet.addNode().metadata.name;
    const on = (executor = executorOn(api, { terminationGraceSeconds: 60 }));
    await untilRunning(on, job(1, node));
    // At the start of a second, so its exit and its deletion fall in the same one.
    await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 20));
    api.kubelet.exit('boa-job-1-g1-r0', 0);
    const pods = on as unknown as { pods: { current: () => Promise<Array<{ metadata: any; status: any }>> } };
    for (let i = 0; i < 50; i++) {
      const pod = (await pods.pods.current()).find((p) => p.metadata.name === 'boa-job-1-g1-r0');
      if (pod?.status?.phase === 'Succeeded') break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    // The service rescaled the job before it saw that exit: this pass wants generation 2.
    const after = await on.reconcile([job(2, node)]);
    expect(after.filter((r) => r.generation === 1)).toContainEqual(
      expect.objectContaining({ rank: 0, phase: 'succeeded', exitCode: 0 }),
    );
  });

  it('counts the run of a replica deleted from outside up to the grace that deletion used', async () => {
    let clock = Date.UTC(2026, 0, 1, 12, 0, 0);
    const api = await startFakeKubeApi({ kubelet: { autoStartMs: 0 }, now: () => clock });
    fake = api;
    const node = api.kubelet.addNode().metadata.name;
    // The pods' own grace is 120 s (the default); kubectl drain --grace-period=30 uses 30.
    const on = (executor = executorOn(api, {}, () => clock));
    await untilRunning(on, job(1, node));
    clock += 100_000;
    await coreApi(api.kubeConfig(), 5000).deleteNamespacedPod({
      name: 'boa-job-1-g1-r0',
      namespace: NS,
      gracePeriodSeconds: 30,
    });
    let statuses: readonly ReplicaStatus[] = [];
    for (let i = 0; i < 100 && statuses[0]?.phase !== 'stopping'; i++) {
      statuses = await on.reconcile([job(1, node)]);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // 100 s: resumed for free (over interruptedMinRunSeconds), not counted as a failure.
    expect(statuses[0]).toMatchObject({ phase: 'stopping', interrupted: true, ranForMs: 100_000 });
  });

  it("deletes only jobs' Services: another Service labelled as boa's stays", async () => {
    const api = await startFakeKubeApi({ kubelet: { autoStartMs: 0 } });
    fake = api;
    const core = coreApi(api.kubeConfig(), 5000);
    const service = (name: string, labels: Record<string, string>) => ({
      metadata: { name, namespace: NS, labels: { 'app.kubernetes.io/managed-by': 'boa', ...labels } },
      spec: { clusterIP: 'None', ports: [{ port: 80 }] },
    });
    await core.createNamespacedService({
      namespace: NS,
      body: service('boa-dashboard', { app: 'dashboard' }),
    });
    await core.createNamespacedService({
      namespace: NS,
      body: service('checkpoint-sync', { 'boa.dev/job-id': 'shared' }),
    });
    await core.createNamespacedService({
      namespace: NS,
      body: service('boa-job-7', { 'app.kubernetes.io/component': 'job', 'boa.dev/job-id': '7' }),
    });
    const on = (executor = executorOn(api, { terminationGraceSeconds: 60 }));
    await on.reconcile([]);
    // Job 7 is gone, so its Service goes; the other two are not a job's.
    for (let i = 0; i < 50 && api.services(NS).length > 2; i++) await new Promise((r) => setTimeout(r, 20));
    expect(
      api
        .services(NS)
        .map((s) => s.metadata.name)
        .sort(),
    ).toEqual(['boa-dashboard', 'checkpoint-sync']);
  });
});
