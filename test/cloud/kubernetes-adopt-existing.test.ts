import { CoreV1Api } from '@kubernetes/client-node';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { DesiredJob, Executor, ReplicaStatus } from '../../src/service/ports.ts';
import type { FakeKubeApi } from '../fakes/kube-api/index.ts';
import { captureLogs } from './fake-time.ts';
import { fakeKubeCluster, jobOnNodes } from './kube-executor-fixture.ts';

/**
 * A create answered AlreadyExists when the executor's cache did not know the pod (its watch behind): the
 * pod of that name is read and taken as it is, and the next passes judge it as any pod they list. One
 * still stopping, or on another node than the placement's, is not the replica boa asked for: it must
 * end up created again where it belongs, with no failure reported on the way, and the log must not call
 * it adopted.
 */
const NS = 'boa-jobs';
const POD = 'boa-job-9-g1-r0';

describe('a pod that already exists when boa creates it', () => {
  const cluster = fakeKubeCluster(NS);
  let fake: FakeKubeApi;
  let nodes: string[];
  let logs: ReturnType<typeof captureLogs>;
  const executor = (logger = logs.logger) => cluster.executor({}, { logger });
  const job = (node: string): DesiredJob => jobOnNodes(9, 1, [node], { gpus: 1, env: () => ({}) });
  beforeEach(() => {
    ({ fake, nodes } = cluster);
    logs = captureLogs();
  });

  /** An executor whose cache listed an empty namespace and then hears nothing more. */
  async function behind(): Promise<Executor> {
    const e = executor();
    await e.reconcile([]);
    await vi.waitFor(() => expect(fake.openWatches()).toBeGreaterThan(0), { timeout: 20_000 });
    fake.stallWatches();
    return e;
  }

  /** Another boa life's executor, its log apart, running `desired` until it runs. */
  async function runElsewhere(desired: DesiredJob): Promise<Executor> {
    const other = executor(captureLogs().logger);
    await vi.waitFor(
      async () => {
        const statuses = await other.reconcile([desired]);
        expect(statuses.map((s) => s.phase)).toEqual(['running']);
      },
      { timeout: 20_000 },
    );
    return other;
  }

  /** Reconciles until the job's pod runs where desired, collecting every status reported on the way. */
  async function untilRunning(e: Executor, desired: DesiredJob, seen: ReplicaStatus[]): Promise<void> {
    await vi.waitFor(
      async () => {
        const statuses = await e.reconcile([desired]);
        seen.push(...statuses);
        fake.kubelet.finishTermination();
        const pod = fake.pods(NS).find((p) => p.metadata.name === POD);
        expect(pod?.spec.nodeName).toBe(desired.replicas[0]!.node);
        expect(pod?.metadata.deletionTimestamp).toBeUndefined();
        expect(statuses.find((s) => s.jobId === 9)?.phase).toBe('running');
      },
      { timeout: 20_000, interval: 20 },
    );
  }

  it('one still stopping is waited for, then created again; nothing reported failed', async () => {
    const e = await behind();
    const other = await runElsewhere(job(nodes[0]!));
    await other.reconcile([]); // that life stops it: terminating for its grace
    expect(fake.pods(NS)[0]?.metadata.deletionTimestamp).toBeDefined();

    const first = await e.reconcile([job(nodes[0]!)]);
    expect(first.find((s) => s.jobId === 9)?.phase).toBe('stopping');
    expect(logs.events()).toContain('kube.pod.exists-stopping');
    expect(logs.events()).not.toContain('kube.pod.adopted');

    fake.closeWatches(); // the watch resumes, and hears the rest
    const seen: ReplicaStatus[] = [...first];
    await untilRunning(e, job(nodes[0]!), seen);
    expect(seen.filter((s) => s.phase === 'failed')).toEqual([]);
  });

  it('one on another node than the placement is stopped and created on its node; nothing reported failed', async () => {
    const e = await behind();
    const other = await runElsewhere(job(nodes[1]!));
    await other.close();

    const first = await e.reconcile([job(nodes[0]!)]);
    expect(fake.pods(NS).map((p) => p.spec.nodeName)).toEqual([nodes[1]]);
    expect(logs.lines).toContainEqual(
      expect.objectContaining({ event: 'kube.pod.exists-elsewhere', pod: POD, node: nodes[0], on: nodes[1] }),
    );
    expect(logs.events()).not.toContain('kube.pod.adopted');

    fake.closeWatches();
    const seen: ReplicaStatus[] = [...first];
    await untilRunning(e, job(nodes[0]!), seen);
    expect(seen.filter((s) => s.phase === 'failed')).toEqual([]);
  });

  it('the very pod boa would create (an earlier attempt answered late) is adopted as it runs', async () => {
    const e = await behind();
    const other = await runElsewhere(job(nodes[0]!));
    await other.close();
    const posts = fake.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/pods')).length;

    const statuses = await e.reconcile([job(nodes[0]!)]);
    expect(statuses.find((s) => s.jobId === 9)).toMatchObject({ phase: 'running', node: nodes[0] });
    expect(logs.events()).toContain('kube.pod.adopted');
    expect(fake.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/pods'))).toHaveLength(
      posts + 1,
    );
    expect(fake.pods(NS)).toHaveLength(1);
  });

  it('one orphaned from its Service (deleted keeping its dependents) is taken as it runs, said to be not owned', async () => {
    const e = await behind();
    const other = await runElsewhere(job(nodes[0]!));
    await other.close();
    // kubectl delete service --cascade=orphan: the pod runs on, its owner reference dropped.
    await fake
      .kubeConfig()
      .makeApiClient(CoreV1Api)
      .deleteNamespacedService({ name: 'boa-job-9', namespace: NS, propagationPolicy: 'Orphan' });
    expect(fake.pods(NS)[0]?.metadata.ownerReferences ?? []).toEqual([]);

    const statuses = await e.reconcile([job(nodes[0]!)]);
    expect(statuses.find((s) => s.jobId === 9)).toMatchObject({ phase: 'running', node: nodes[0] });
    expect(logs.events()).toContain('kube.pod.exists-other-owner');
    expect(fake.pods(NS)).toHaveLength(1);
  });
});
