import type { V1NetworkPolicy, V1Pod, V1Secret, V1Service } from '@kubernetes/client-node';

/**
 * A running job's objects as the boa of 2026-11-30 (8f5b1827) made them: captured from that boa running
 * job 1 on the fake API server, then cut to one replica of four GPUs (its NNODES and WORLD_SIZE with it),
 * the uids left to the server and the token made up. Written out rather than made by today's code, so a
 * change to the labels or names boa recognises its objects by fails the upgrade test
 * (kubernetes-upgrade-adoption.test.ts), not the running jobs of a boa upgraded in place. The boa of
 * 2026-12-04 (fae01922) made the same, and its namespace's Lease. Today's pod differs in what no check
 * reads: it tolerates the new taint key too, and never passes a job's NVIDIA_VISIBLE_DEVICES on.
 */
export function olderJobObjects(namespace: string, node: string) {
  const labels = {
    'app.kubernetes.io/managed-by': 'boa',
    'app.kubernetes.io/component': 'job',
    'boa.dev/job-id': '1',
  };
  const selector = { 'app.kubernetes.io/managed-by': 'boa', 'boa.dev/job-id': '1' };
  const owned = (serviceUid: string) => [
    { apiVersion: 'v1', controller: true, kind: 'Service', name: 'boa-job-1', uid: serviceUid },
  ];
  const service: V1Service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { labels, name: 'boa-job-1', namespace },
    spec: {
      type: 'ClusterIP',
      clusterIP: 'None',
      ports: [{ name: 'rendezvous', port: 29500, targetPort: 29500 }],
      publishNotReadyAddresses: true,
      selector,
    },
  };
  const secret = (serviceUid: string): V1Secret => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      labels,
      name: `boa-job-1-token-${serviceUid}`,
      namespace,
      ownerReferences: owned(serviceUid),
    },
    data: { token: Buffer.from('job-token-of-the-older-boa').toString('base64') },
    type: 'Opaque',
    immutable: true,
  });
  const networkPolicy = (serviceUid: string): V1NetworkPolicy => ({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { labels, name: `boa-job-1-${serviceUid}`, namespace, ownerReferences: owned(serviceUid) },
    spec: {
      ingress: [{ _from: [{ podSelector: { matchLabels: selector } }] }],
      podSelector: { matchLabels: selector },
      policyTypes: ['Ingress'],
    },
  });
  const env = (serviceUid: string) => [
    { name: 'BOA_FIRST_RANK', value: '0' },
    { name: 'BOA_GENERATION', value: '1' },
    { name: 'BOA_JOB_ID', value: '1' },
    {
      name: 'BOA_JOB_TOKEN',
      valueFrom: { secretKeyRef: { key: 'token', name: `boa-job-1-token-${serviceUid}` } },
    },
    { name: 'BOA_URL', value: 'http://boa.boa-system.svc:8080' },
    { name: 'MASTER_ADDR', value: `rank-0.boa-job-1.${namespace}.svc` },
    { name: 'MASTER_PORT', value: '29500' },
    { name: 'NNODES', value: '1' },
    { name: 'NODE_RANK', value: '0' },
    { name: 'NPROC_PER_NODE', value: '4' },
    { name: 'WORLD_SIZE', value: '4' },
  ];
  const pod = (serviceUid: string): V1Pod => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      labels: { ...labels, 'boa.dev/generation': '1', 'boa.dev/rank': '0', 'boa.dev/network': 'job' },
      name: 'boa-job-1-g1-r0',
      namespace,
      ownerReferences: owned(serviceUid),
    },
    spec: {
      terminationGracePeriodSeconds: 30,
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      containers: [
        {
          command: ['python', 'train.py'],
          env: env(serviceUid),
          image: 'ghcr.io/example/train:1',
          name: 'train',
          ports: [{ containerPort: 29500, name: 'rendezvous' }],
          resources: { limits: { 'nvidia.com/gpu': '4' }, requests: { 'nvidia.com/gpu': '4' } },
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: { drop: ['NET_RAW'] },
            seccompProfile: { type: 'RuntimeDefault' },
          },
          volumeMounts: [{ mountPath: '/dev/shm', name: 'dshm' }],
        },
      ],
      hostname: 'rank-0',
      nodeName: node,
      subdomain: 'boa-job-1',
      tolerations: [{ effect: 'NoSchedule', key: 'nvidia.com/gpu', operator: 'Exists' }],
      volumes: [{ emptyDir: { medium: 'Memory' }, name: 'dshm' }],
    },
  });
  return { service, secret, networkPolicy, pod };
}
