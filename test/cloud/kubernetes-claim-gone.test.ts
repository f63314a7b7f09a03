/**
 * A checkpoint volume claim that goes away after its job was submitted (claim-recheck.ts): its pods,
 * pinned by spec.nodeName, wait in ContainerCreating (the fake kubelet leaves them so, as the real one
 * does), and boa, which reads no FailedMount Event, reads the claim again, once per 30 s for all its
 * pods: gone, Lost or being deleted fails them at once, for good; a read that fails fails nothing.
 */
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLAIM_RECHECK_MS, NOT_RESTARTED } from '../../src/cloud/kubernetes/claim-recheck.ts';
import { createKubernetesExecutor } from '../../src/cloud/kubernetes/index.ts';
import type { DesiredJob, Executor, ReplicaStatus } from '../../src/service/ports.ts';
import { type FakeKubeApi, startFakeKubeApi } from '../fakes/kube-api/index.ts';

const NS = 'boa-jobs';
const DENIED =
  'persistentvolumeclaims "ckpt" is forbidden: User "system:serviceaccount:boa:boa" cannot get resource ' +
  '"persistentvolumeclaims" in API group "" in the namespace "boa-jobs"';

describe('a checkpoint claim gone after submission', () => {
  let fake: FakeKubeApi;
  let nodes: string[];
  let executor: Executor;
  let t: number;

  beforeEach(async () => {
    // No kubelet of its own: pods start when the test says (startPods).
    fake = await startFakeKubeApi();
    nodes = [fake.kubelet.addNode().metadata.name, fake.kubelet.addNode().metadata.name];
    t = Date.UTC(2026, 11, 1, 12);
    executor = createKubernetesExecutor(
      { terminationGraceSeconds: 60, kubernetes: { namespace: NS } },
      pino({ level: 'silent' }),
      {
        instanceId: 'test-boa',
        kubeConfig: fake.kubeConfig(),
        sleep: async () => undefined,
        random: () => 0.5,
        now: () => t,
      },
    );
    fake.store.create('persistentvolumeclaims', NS, {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'ckpt' } as never,
      spec: { accessModes: ['ReadWriteMany'], storageClassName: 'efs' },
      status: { phase: 'Bound' },
    });
  });
  afterEach(async () => {
    await executor.close();
    await fake.close();
  });

  /** Job 1 on both nodes, mounting claim "ckpt". */
  const job: DesiredJob = {
    jobId: 1,
    generation: 1,
    replicas: [0, 1].map((rank) => ({
      jobId: 1,
      generation: 1,
      rank,
      node: '',
      gpus: 4,
      env: {},
      workload: {
        image: 'repo/train:1',
        command: ['python3', 'train.py'],
        checkpoint: { volumeClaim: 'ckpt' },
      },
    })),
  };
  const desired = () => [{ ...job, replicas: job.replicas.map((r, i) => ({ ...r, node: nodes[i]! })) }];
  const claimReads = () =>
    fake.requests.filter((r) => r.path.endsWith('/persistentvolumeclaims/ckpt')).length;
  const setClaim = (change: (pvc: any) => any) =>
    fake.store.update('persistentvolumeclaims', NS, 'ckpt', (pvc) => change(structuredClone(pvc)));

  /** Reconciles until `ok` holds of the statuses (the executor's cache catching up with the fake). */
  async function until(ok: (s: readonly ReplicaStatus[]) => boolean, what: string) {
    for (let i = 0; i < 200; i++) {
      const statuses = await executor.reconcile(desired());
      if (ok(statuses)) return statuses;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`timed out waiting for ${what}`);
  }
  const waiting = (s: readonly ReplicaStatus[]) =>
    s.length === 2 && s.every((r) => r.phase === 'starting' && r.reason?.startsWith('ContainerCreating'));

  /** The pods made, Pending: the kubelet has not tried them yet. */
  const podsMade = () => until((s) => s.length === 2, 'the pods made');

  it('fails both replicas for good, naming the claim, at the first pass that sees them wait; the claim read once', async () => {
    await podsMade();
    // Deleted before the pods could start.
    fake.store.remove('persistentvolumeclaims', NS, 'ckpt');
    fake.kubelet.startPods();
    const failed = await until((s) => s.some((r) => r.phase === 'failed'), 'a replica failed');
    expect(failed).toHaveLength(2);
    for (const replica of failed)
      expect(replica).toMatchObject({ phase: 'failed', notRestartable: NOT_RESTARTED });
    expect(failed[0]!.reason).toMatch(
      /^ContainerCreating: volume claim "ckpt" no longer exists in namespace boa-jobs \(deleted after the job was submitted\): its job's pods cannot mount it .*startTimeoutSeconds; make a ReadWriteMany claim of that name again and submit the job again, or submit with checkpoint\.uri/,
    );
    // One read for both pods; the passes within the interval read nothing more.
    expect(claimReads()).toBe(1);
    for (let i = 0; i < 5; i++) await executor.reconcile(desired());
    expect(claimReads()).toBe(1);
    t += CLAIM_RECHECK_MS;
    await executor.reconcile(desired());
    expect(claimReads()).toBe(2);
  });

  it('keeps replicas waiting on a claim that is there (read once per 30 s), and fails them once it turns Lost or is being deleted', async () => {
    await podsMade();
    // Not Bound (yet): the kubelet waits, and so does boa; the start deadline stays the limit.
    setClaim((pvc) => ({ ...pvc, status: { phase: 'Pending' } }));
    fake.kubelet.startPods();
    // The claim is read by the pass whose start saw the pods wait, which may be the one after the first
    // to report them waiting (the watch's news arriving during a pass).
    await until((s) => waiting(s) && claimReads() > 0, 'the pods waiting to mount, their claim read');
    expect(claimReads()).toBe(1);
    for (let i = 0; i < 5; i++) expect(waiting(await executor.reconcile(desired()))).toBe(true);
    t += CLAIM_RECHECK_MS - 1;
    expect(waiting(await executor.reconcile(desired()))).toBe(true);
    expect(claimReads()).toBe(1);
    setClaim((pvc) => ({ ...pvc, status: { phase: 'Lost' } }));
    t += 1;
    const lost = await executor.reconcile(desired());
    expect(claimReads()).toBe(2);
    expect(lost.map((r) => [r.phase, r.notRestartable])).toEqual([
      ['failed', NOT_RESTARTED],
      ['failed', NOT_RESTARTED],
    ]);
    expect(lost[0]!.reason).toContain('volume claim "ckpt" is Lost (its volume is gone)');
    // Deleted while pods use it: pvc-protection keeps it, terminating, and the kubelet mounts none such.
    setClaim((pvc) => ({
      ...pvc,
      metadata: { ...pvc.metadata, deletionTimestamp: new Date(t).toISOString() },
      status: { phase: 'Bound' },
    }));
    t += CLAIM_RECHECK_MS;
    const deleting = await executor.reconcile(desired());
    expect(deleting[0]).toMatchObject({ phase: 'failed', notRestartable: NOT_RESTARTED });
    expect(deleting[0]!.reason).toContain('volume claim "ckpt" is being deleted (since 2026-12-01T12:00:30');
  });

  it('fails nothing when the claim cannot be read (a role without get, an API server out), reading it no more often', async () => {
    await podsMade();
    fake.store.remove('persistentvolumeclaims', NS, 'ckpt');
    fake.faults.inject({
      status: 403,
      reason: 'Forbidden',
      message: DENIED,
      count: 1_000,
      match: (r) => r.path.endsWith('/persistentvolumeclaims/ckpt'),
    });
    fake.kubelet.startPods();
    await until(waiting, 'the pods waiting to mount');
    for (let i = 0; i < 5; i++) expect(waiting(await executor.reconcile(desired()))).toBe(true);
    // A 403 is final: one request.
    expect(claimReads()).toBe(1);
    fake.faults.clear();
    fake.faults.inject({
      status: 503,
      count: 1_000,
      match: (r) => r.path.endsWith('/persistentvolumeclaims/ckpt'),
    });
    t += CLAIM_RECHECK_MS;
    for (let i = 0; i < 5; i++) expect(waiting(await executor.reconcile(desired()))).toBe(true);
    // Two attempts through the retry layer, once in the interval.
    expect(claimReads()).toBe(3);
    // Readable again: the claim is gone, and its pods fail.
    fake.faults.clear();
    t += CLAIM_RECHECK_MS;
    const failed = await executor.reconcile(desired());
    expect(failed.map((r) => r.phase)).toEqual(['failed', 'failed']);
    expect(claimReads()).toBe(4);
  });

  it('judges a job submitted after the claim was made again by a read of its own, not the last verdict', async () => {
    // Found in review: within the 30 s a verdict of gone stood, it failed the new job's pods for good.
    await podsMade();
    fake.store.remove('persistentvolumeclaims', NS, 'ckpt');
    fake.kubelet.startPods();
    await until((s) => s.some((r) => r.phase === 'failed'), 'job 1 failed');
    expect(claimReads()).toBe(1);
    // The user makes the claim again (Pending while its volume binds) and submits job 2, 10 s later.
    fake.store.create('persistentvolumeclaims', NS, {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'ckpt' } as never,
      spec: { accessModes: ['ReadWriteMany'], storageClassName: 'efs' },
      status: { phase: 'Pending' },
    });
    t += 10_000;
    const job2 = () => [
      { ...job, jobId: 2, replicas: job.replicas.map((r, i) => ({ ...r, jobId: 2, node: nodes[i]! })) },
    ];
    let second: ReplicaStatus[] = [];
    for (let i = 0; i < 200 && !waiting(second); i++) {
      second = (await executor.reconcile(job2())).filter((r) => r.jobId === 2);
      fake.kubelet.startPods();
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(second.map((r) => r.phase)).toEqual(['starting', 'starting']);
    // Read again for them, once: the claim is there.
    expect(claimReads()).toBe(2);
    for (let i = 0; i < 5; i++) {
      const statuses = await executor.reconcile(job2());
      expect(waiting(statuses.filter((r) => r.jobId === 2))).toBe(true);
    }
    expect(claimReads()).toBe(2);
  });
});
