/** The pod and Service manifests a replica runs as, and the workload checks and quantities behind them. */
import { describe, expect, it } from 'vitest';
import { kubernetesConfig } from '../../src/cloud/kubernetes/config.ts';
import { tokenSecretName } from '../../src/cloud/kubernetes/names.ts';
import { checkPodWorkload, podManifest, serviceManifest } from '../../src/cloud/kubernetes/pods.ts';
import { scaleQuantity } from '../../src/cloud/kubernetes/quantity.ts';
import { config, replica } from './kubernetes-pod-fixture.ts';

describe('Kubernetes pod and service manifests', () => {
  const pod = podManifest(replica, { uid: 'svc-uid' }, config);
  const container = pod.spec!.containers[0]!;
  const env = Object.fromEntries(container.env!.map((e) => [e.name, e.value]));

  it('pins the pod to its node with exactly its GPUs, never restarted by the kubelet', () => {
    expect(pod.metadata!.name).toBe('boa-job-42-g3-r1');
    expect(pod.metadata!.namespace).toBe('train');
    expect(pod.spec!.nodeName).toBe('ip-10-0-1-7.ec2.internal');
    expect(pod.spec!.restartPolicy).toBe('Never');
    expect(pod.spec!.terminationGracePeriodSeconds).toBe(90);
    expect(container.resources!.requests).toEqual({ 'nvidia.com/gpu': '2', cpu: '7000m', memory: '32Gi' });
    expect(container.resources!.limits).toEqual({ 'nvidia.com/gpu': '2', memory: '32Gi' });
    // The GPU nodes' taint, by boa's key and by the old one nodes from before an upgrade may carry.
    expect(pod.spec!.tolerations).toEqual([
      { key: 'boa.dev/gpu', operator: 'Exists', effect: 'NoSchedule' },
      { key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' },
    ]);
  });

  it('labels the pod with job, generation and rank, owned by the job Service', () => {
    expect(pod.metadata!.labels).toEqual({
      'app.kubernetes.io/managed-by': 'boa',
      'app.kubernetes.io/component': 'job',
      'boa.dev/job-id': '42',
      'boa.dev/generation': '3',
      'boa.dev/rank': '1',
      // Reached only through its job's NetworkPolicy (the namespace admits pods without it).
      'boa.dev/network': 'job',
    });
    expect(pod.metadata!.ownerReferences).toEqual([
      { apiVersion: 'v1', kind: 'Service', name: 'boa-job-42', uid: 'svc-uid', controller: true },
    ]);
    expect(pod.spec!.hostname).toBe('rank-1');
    expect(pod.spec!.subdomain).toBe('boa-job-42');
  });

  it("runs the workload with the service's environment over the user's, and the checkpoint claim", () => {
    expect(container.image).toBe('repo/train:1.0');
    expect(container.command).toEqual(['python3', 'train.py']);
    expect(container.args).toEqual(['--epochs', '90']);
    expect(env).toMatchObject({
      USER_VAR: 'x',
      WORLD_SIZE: '6',
      NODE_RANK: '1',
      MASTER_ADDR: 'rank-0.boa-job-42.train.svc',
      BOA_CHECKPOINT_DIR: '/checkpoint',
    });
    expect(pod.spec!.volumes).toContainEqual({
      name: 'checkpoint',
      persistentVolumeClaim: { claimName: 'ckpt' },
    });
    expect(container.volumeMounts).toContainEqual({ name: 'checkpoint', mountPath: '/checkpoint' });
  });

  it('uses the configured service account and image pull secrets, and none when not configured', () => {
    expect(pod.spec!.serviceAccountName).toBe('trainer');
    expect(pod.spec!.imagePullSecrets).toEqual([{ name: 'ecr-pull' }, { name: 'ghcr-pull' }]);
    expect(pod.spec!.automountServiceAccountToken).toBeUndefined();
    const plain = podManifest(replica, { uid: 'u' }, kubernetesConfig({ namespace: 'train' }));
    expect(plain.spec!.serviceAccountName).toBeUndefined();
    expect(plain.spec!.imagePullSecrets).toBeUndefined();
    // No service account for jobs: the namespace's default token is not mounted into them.
    expect(plain.spec!.automountServiceAccountToken).toBe(false);
    // Hardened as far as no training image minds.
    expect(plain.spec!.containers[0]!.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      seccompProfile: { type: 'RuntimeDefault' },
      capabilities: { drop: ['NET_RAW'] },
    });
  });

  it("reads the job's token from the job's Secret: nowhere in the pod spec, every other variable plain", () => {
    const token = 'tok-Q2hhbmdlTWVPbmx5SW5UZXN0cy0wMTIzNDU2Nzg5';
    const withToken = { ...replica, env: { ...replica.env, BOA_JOB_TOKEN: token } };
    const uid = '0b6f6c1e-2f0a-4c1e-9a57-3f1d2c4b5a69';
    const spec = podManifest(withToken, { uid }, config);
    const serialized = JSON.stringify(spec);
    expect(serialized).not.toContain(token);
    expect(serialized).not.toContain(Buffer.from(token).toString('base64'));
    const vars = spec.spec!.containers[0]!.env!;
    expect(vars.find((e) => e.name === 'BOA_JOB_TOKEN')).toEqual({
      name: 'BOA_JOB_TOKEN',
      // The Secret of this Service (its uid): a Service made again never reads the old one's.
      valueFrom: { secretKeyRef: { name: `boa-job-42-token-${uid}`, key: 'token' } },
    });
    expect(vars.filter((e) => e.valueFrom)).toHaveLength(1);
    expect(vars.find((e) => e.name === 'NODE_RANK')).toEqual({ name: 'NODE_RANK', value: '1' });
    // A DNS-1123 subdomain for the largest job id (a Secret's name may be 253 characters).
    const largest = tokenSecretName(999_999_999_999_999, uid);
    expect(largest).toBe(`boa-job-999999999999999-token-${uid}`);
    expect(largest).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
    expect(largest.length).toBeLessThanOrEqual(253);
  });

  it('makes a headless Service publishing not-ready pods, selecting only the job', () => {
    const svc = serviceManifest(42, config);
    expect(svc.metadata!.name).toBe('boa-job-42');
    expect(svc.spec).toMatchObject({
      clusterIP: 'None',
      publishNotReadyAddresses: true,
      selector: { 'app.kubernetes.io/managed-by': 'boa', 'boa.dev/job-id': '42' },
    });
  });
});

describe('workload checks and quantities', () => {
  it('names the field that cannot run on Kubernetes', () => {
    expect(checkPodWorkload({ command: ['a'] })?.field).toBe('workload.image');
    expect(checkPodWorkload({ command: ['a'], image: 'my image' })).toEqual({
      field: 'workload.image',
      message: 'image "my image" must not contain spaces',
    });
    expect(checkPodWorkload({ command: ['a'], image: 'i', memoryPerGpu: '16 gigs' })?.field).toBe(
      'workload.memoryPerGpu',
    );
    expect(checkPodWorkload({ command: ['a'], image: 'i', memoryPerGpu: '16Gi' })).toBeUndefined();
  });

  // Found in review: the device plugin hands a pod its GPUs as NVIDIA_VISIBLE_DEVICES and the kubelet
  // puts the pod spec's env after it, so a job's "all" would see every GPU of its node.
  it("refuses, and never passes on, a job's own choice of the node's GPUs", () => {
    const env = { NVIDIA_VISIBLE_DEVICES: 'all', NVIDIA_MIG_CONFIG_DEVICES: 'all', KEEP: '1' };
    expect(checkPodWorkload({ command: ['a'], image: 'i', env })).toEqual({
      field: 'workload.env',
      message:
        "NVIDIA_VISIBLE_DEVICES is set by boa's GPU allocation (the device plugin), not by the job: remove it",
    });
    expect(
      checkPodWorkload({ command: ['a'], image: 'i', env: { NVIDIA_DRIVER_CAPABILITIES: 'all' } }),
    ).toBeUndefined();
    // A job stored before the check.
    const pod = podManifest({ ...replica, workload: { ...replica.workload, env } }, { uid: 'u' }, config);
    const names = pod.spec?.containers[0]?.env?.map((e) => e.name) ?? [];
    expect(names).toContain('KEEP');
    expect(names.filter((n) => n.startsWith('NVIDIA_'))).toEqual([]);
  });

  it('scales quantities in their own unit', () => {
    expect(scaleQuantity('16Gi', 3)).toBe('48Gi');
    expect(scaleQuantity('1.5Gi', 3)).toBe('4.5Gi');
    expect(scaleQuantity('512', 2)).toBe('1024');
    expect(() => scaleQuantity('-1Gi', 2)).toThrow(/not a Kubernetes quantity/);
  });
});
