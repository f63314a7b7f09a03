/**
 * A job's checkpoint volume claim, checked at submission (src/service/claim-check.ts) by the Kubernetes
 * executor (real client, fake API server): its pods are pinned to nodes by spec.nodeName, so only a
 * ReadWriteMany claim can be mounted by all of them; any other is refused before anything is stored.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createKubernetesExecutor } from '../../src/cloud/kubernetes/index.ts';
import { LocalExecutor } from '../../src/cloud/local/executor.ts';
import { type FakeKubeApi, startFakeKubeApi } from '../fakes/kube-api/index.ts';
import { startService } from './harness.ts';

const NS = 'boa-jobs';
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

function claim(fake: FakeKubeApi, name: string, accessModes: string[], phase?: string): void {
  fake.store.create('persistentvolumeclaims', NS, {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name } as never,
    spec: { accessModes, storageClassName: 'x', resources: { requests: { storage: '10Gi' } } },
    status: { phase: phase ?? 'Bound' },
  });
}

async function onKubernetes() {
  const fake = await startFakeKubeApi();
  cleanups.push(() => fake.close());
  const executor = createKubernetesExecutor(
    { terminationGraceSeconds: 60, kubernetes: { namespace: NS, requestTimeoutMs: 500 } },
    pino({ level: 'silent' }),
    { kubeConfig: fake.kubeConfig(), sleep: async () => undefined, random: () => 0.5 },
  );
  const s = await startService({ executor, config: { priorRates: { bert: 1 } } });
  cleanups.push(s.close);
  // A fresh database takes jobs with a workload once the executor has answered (executor_not_ready).
  s.service.execution.reconcile();
  await s.service.execution.settle();
  const submit = (volumeClaim: string) =>
    s.request('POST', '/v1/jobs', {
      class: 'bert',
      workload: { image: 'repo/train:1', command: ['python3', 'train.py'], checkpoint: { volumeClaim } },
    });
  const claimReads = () => fake.requests.filter((r) => r.path.includes('/persistentvolumeclaims/')).length;
  return { fake, s, submit, claimReads };
}

describe('a checkpoint volume claim on the Kubernetes executor', () => {
  it('is refused when the jobs namespace has no such claim, naming it and what to use instead', async () => {
    const { s, submit } = await onKubernetes();
    const refused = await submit('ckpt');
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({
      code: 'workload_not_runnable',
      field: 'workload.checkpoint.volumeClaim',
    });
    expect(refused.body.error.message).toContain('volume claim "ckpt" not found in namespace boa-jobs');
    expect(refused.body.error.message).toMatch(/ReadWriteMany.*efs\.csi\.aws\.com.*s3:\/\//);
    expect(s.repo.listJobs(10)).toEqual([]);
  });

  it('is refused when ReadWriteOnce (an EBS volume: never bound, or attached to one node of one zone)', async () => {
    const { fake, s, submit } = await onKubernetes();
    claim(fake, 'ebs-ckpt', ['ReadWriteOnce']);
    const refused = await submit('ebs-ckpt');
    expect(refused.status).toBe(422);
    expect(refused.body.error.field).toBe('workload.checkpoint.volumeClaim');
    const { message } = refused.body.error;
    expect(message).toContain('volume claim "ebs-ckpt" is ReadWriteOnce, not ReadWriteMany');
    expect(message).toContain('nodes boa picks itself');
    expect(message).toContain('across zones and several nodes at once');
    expect(message).toMatch(/efs\.csi\.aws\.com.*checkpoint\.uri/);
    expect(s.repo.listJobs(10)).toEqual([]);
  });

  it('is accepted when ReadWriteMany (EFS): the job is stored with its claim, read once', async () => {
    const { fake, s, submit, claimReads } = await onKubernetes();
    claim(fake, 'efs-ckpt', ['ReadWriteMany']);
    const accepted = await submit('efs-ckpt');
    expect(accepted.status).toBe(201);
    expect(claimReads()).toBe(1);
    expect(s.repo.getJob(accepted.body.id)?.workload?.checkpoint).toEqual({ volumeClaim: 'efs-ckpt' });
  });

  it('is refused when ReadWriteMany but not Bound (Pending: a WaitForFirstConsumer class never binds for pinned pods)', async () => {
    const { fake, s, submit } = await onKubernetes();
    claim(fake, 'rwx-waiting', ['ReadWriteMany'], 'Pending');
    const refused = await submit('rwx-waiting');
    expect(refused.status).toBe(422);
    expect(refused.body.error.field).toBe('workload.checkpoint.volumeClaim');
    expect(refused.body.error.message).toMatch(
      /^volume claim "rwx-waiting" is Pending, not Bound: .*WaitForFirstConsumer.*kubectl -n boa-jobs get pvc rwx-waiting.*efs\.csi\.aws\.com.*s3:\/\//,
    );
    expect(s.repo.listJobs(10)).toEqual([]);
  });

  it('is refused for now (503, nothing stored) when the API server cannot be asked, and taken when it can', async () => {
    const { fake, s, submit, claimReads } = await onKubernetes();
    claim(fake, 'efs-ckpt', ['ReadWriteMany']);
    fake.faults.inject({ status: 503, count: 2, match: (r) => r.path.includes('/persistentvolumeclaims/') });
    const refused = await submit('efs-ckpt');
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe('executor_unavailable');
    expect(refused.body.error.message).toBe(
      'could not read volume claim "efs-ckpt": the Kubernetes API server answered 503: fake kube-api: ' +
        'injected 503 ServiceUnavailable (2 attempts); nothing was stored: try again in a few seconds',
    );
    // Bounded: two attempts, not a reconcile's four.
    expect(claimReads()).toBe(2);
    expect(s.repo.listJobs(10)).toEqual([]);
    expect((await submit('efs-ckpt')).status).toBe(201);
  });
});

it('the local executor refuses a volume claim at submission: it mounts none, and /checkpoint would name no folder', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'boa-claim-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
  const s = await startService({ executor, config: { priorRates: { bert: 1 } } });
  cleanups.push(s.close);
  s.service.execution.reconcile();
  await s.service.execution.settle();
  const refused = await s.request('POST', '/v1/jobs', {
    class: 'bert',
    workload: { command: ['true'], checkpoint: { volumeClaim: 'ckpt' } },
  });
  expect(refused.status).toBe(422);
  expect(refused.body.error.field).toBe('workload.checkpoint.volumeClaim');
  expect(refused.body.error.message).toMatch(/mounts no volume claim \("ckpt"\).*checkpoint\.uri/);
  expect(s.repo.listJobs(10)).toEqual([]);
});
