/**
 * A job's checkpoint volume claim, checked at submission (src/service/claim-check.ts) by the Kubernetes
 * executor (real client, fake API server): its pods are pinned to nodes by spec.nodeName, so only a
 * ReadWriteMany claim can be mounted by all of them, and one Pending binds only if its class does not wait
 * for a scheduled pod; any other is refused before anything is stored.
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

function claim(
  fake: FakeKubeApi,
  name: string,
  accessModes: string[],
  phase?: string,
  storageClassName = 'x',
): void {
  fake.store.create('persistentvolumeclaims', NS, {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name } as never,
    spec: { accessModes, storageClassName, resources: { requests: { storage: '10Gi' } } },
    status: { phase: phase ?? 'Bound' },
  });
}

function storageClass(fake: FakeKubeApi, name: string, volumeBindingMode: string): void {
  fake.store.create('storageclasses', undefined, {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name } as never,
    provisioner: 'efs.csi.aws.com',
    volumeBindingMode,
  });
}

/** The API server's words when boa's role lacks a rule (classified as RBAC's by the retry layer). */
const denied = (verb: string, resource: string, group: string, where: string) =>
  `${resource} is forbidden: User "system:serviceaccount:boa:boa" cannot ${verb} resource "${resource}" ` +
  `in API group "${group}" ${where}`;

async function onKubernetes() {
  const fake = await startFakeKubeApi();
  cleanups.push(() => fake.close());
  const executor = createKubernetesExecutor(
    { terminationGraceSeconds: 60, kubernetes: { namespace: NS, requestTimeoutMs: 500 } },
    pino({ level: 'silent' }),
    {
      instanceId: 'test-boa',
      kubeConfig: fake.kubeConfig(),
      sleep: async () => undefined,
      random: () => 0.5,
    },
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

  it('is refused when Pending and of a WaitForFirstConsumer class: pinned pods never make it bind', async () => {
    const { fake, s, submit } = await onKubernetes();
    storageClass(fake, 'efs-wait', 'WaitForFirstConsumer');
    claim(fake, 'rwx-waiting', ['ReadWriteMany'], 'Pending', 'efs-wait');
    const refused = await submit('rwx-waiting');
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({
      code: 'workload_not_runnable',
      field: 'workload.checkpoint.volumeClaim',
    });
    expect(refused.body.error.message).toMatch(
      /^volume claim "rwx-waiting" is Pending, and its storage class "efs-wait" binds it only when a pod using it is scheduled \(volumeBindingMode WaitForFirstConsumer\): boa pins its pods to nodes \(spec\.nodeName\).*Immediate.*efs\.csi\.aws\.com.*s3:\/\//,
    );
    expect(s.repo.listJobs(10)).toEqual([]);
  });

  it('is refused for now (503 claim_not_bound) when Pending and of an Immediate class, and taken once Bound', async () => {
    const { fake, s, submit } = await onKubernetes();
    storageClass(fake, 'efs', 'Immediate');
    claim(fake, 'efs-new', ['ReadWriteMany'], 'Pending', 'efs');
    const early = await submit('efs-new');
    expect(early.status).toBe(503);
    expect(early.body.error).toMatchObject({
      code: 'claim_not_bound',
      field: 'workload.checkpoint.volumeClaim',
    });
    expect(early.body.error.message).toBe(
      'volume claim "efs-new" is Pending, not Bound yet: its storage class "efs" binds at once ' +
        '(volumeBindingMode Immediate), so its volume is most likely still being made (an EFS access point ' +
        'takes seconds); try again shortly, once `kubectl -n boa-jobs get pvc efs-new` shows it Bound; ' +
        'nothing was stored',
    );
    expect(s.repo.listJobs(10)).toEqual([]);
    // The provisioner is done.
    fake.store.update('persistentvolumeclaims', NS, 'efs-new', (pvc) => ({
      ...pvc,
      status: { phase: 'Bound' },
    }));
    const accepted = await submit('efs-new');
    expect(accepted.status).toBe(201);
    expect(s.repo.getJob(accepted.body.id)?.workload?.checkpoint).toEqual({ volumeClaim: 'efs-new' });
  });

  it('is refused for now, not for good, when Pending and its class cannot be read (a role without get on storageclasses) or it has none', async () => {
    const { fake, s, submit, claimReads } = await onKubernetes();
    storageClass(fake, 'efs', 'WaitForFirstConsumer');
    claim(fake, 'efs-new', ['ReadWriteMany'], 'Pending', 'efs');
    fake.faults.inject({
      status: 403,
      reason: 'Forbidden',
      message: denied('get', 'storageclasses', 'storage.k8s.io', 'at the cluster scope'),
      match: (r) => r.path.includes('/storageclasses/'),
    });
    const unknown = await submit('efs-new');
    expect(unknown.status).toBe(503);
    expect(unknown.body.error.code).toBe('claim_not_bound');
    expect(unknown.body.error.message).toContain(
      'its storage class "efs" could not be read (boa\'s role needs get on storageclasses (cluster-wide), ' +
        'which the CDK app grants since 2026-12-01: redeploy the stack (cdk deploy))',
    );
    expect(unknown.body.error.message).toContain('kubectl -n boa-jobs get pvc efs-new');
    // A claim of no class (storageClassName ""): a PersistentVolume made by hand binds it; no class read.
    claim(fake, 'static', ['ReadWriteMany'], 'Pending', '');
    const classReads = () => fake.requests.filter((r) => r.path.includes('/storageclasses/')).length;
    const before = classReads();
    const statik = await submit('static');
    expect(statik.status).toBe(503);
    expect(statik.body.error.code).toBe('claim_not_bound');
    expect(statik.body.error.message).toContain(
      'it has no storage class, so it binds to a matching PersistentVolume',
    );
    expect(classReads()).toBe(before);
    expect(claimReads()).toBe(2);
    expect(s.repo.listJobs(10)).toEqual([]);
  });

  it('is refused when Lost: its volume is gone', async () => {
    const { fake, s, submit } = await onKubernetes();
    claim(fake, 'gone', ['ReadWriteMany'], 'Lost');
    const refused = await submit('gone');
    expect(refused.status).toBe(422);
    expect(refused.body.error.message).toMatch(/^volume claim "gone" is Lost, not Bound: its volume is gone/);
    expect(s.repo.listJobs(10)).toEqual([]);
  });

  it('says which permission boa lacks, and how to get it, when its role may not read the claim (no "try again")', async () => {
    const { fake, s, submit, claimReads } = await onKubernetes();
    claim(fake, 'efs-ckpt', ['ReadWriteMany']);
    fake.faults.inject({
      status: 403,
      reason: 'Forbidden',
      message: denied('get', 'persistentvolumeclaims', '', 'in the namespace "boa-jobs"'),
      match: (r) => r.path.includes('/persistentvolumeclaims/'),
    });
    const refused = await submit('efs-ckpt');
    expect(refused.status).toBe(503);
    expect(refused.body.error).toMatchObject({
      code: 'executor_forbidden',
      field: 'workload.checkpoint.volumeClaim',
    });
    const { message } = refused.body.error;
    expect(message).toMatch(
      /^boa may not read volume claim "efs-ckpt" \(the Kubernetes API server answered 403: persistentvolumeclaims is forbidden: .*\): its role in boa-jobs needs get on persistentvolumeclaims, which the CDK app grants \(infra\/k8s\/jobs-rbac\.ts, since 2026-12-01\): redeploy the stack \(cdk deploy\)/,
    );
    expect(message).not.toMatch(/try again/);
    // A refusal is final: asked once, not retried.
    expect(claimReads()).toBe(1);
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
