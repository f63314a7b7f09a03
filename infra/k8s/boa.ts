import { HUNG_AFTER_MS } from '../../src/api/health.ts';

/** Where boa listens, is probed and keeps its SQLite file (the service's own conventions). */
export const BOA_PORT = 8080;
export const BOA_DATA_DIR = '/var/lib/boa';
export const BOA_NAMESPACE = 'boa';
export const BOA_SERVICE_ACCOUNT = 'boa';
export const STORAGE_CLASS = 'boa-gp3';
/** The key of the tag on boa's EBS volume that AWS Backup selects it by; its value is `backupTag`. */
export const BACKUP_TAG_KEY = 'boa-backup';

export interface BoaManifestOptions {
  readonly image: string;
  /** Environment of the boa container besides the fixed settings (BOA_CLUSTER_NAME and so on). */
  readonly env: Readonly<Record<string, string>>;
  readonly nodeSelector: Readonly<Record<string, string>>;
  /** Internet-facing NLB restricted to these CIDRs; undefined keeps the API inside the cluster. */
  readonly loadBalancer?: { readonly sourceRanges: readonly string[]; readonly certificateArn?: string };
}

const labels = { 'app.kubernetes.io/name': 'boa', 'app.kubernetes.io/component': 'api' };

export function namespaceManifest(): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name: BOA_NAMESPACE,
      labels: { 'app.kubernetes.io/name': 'boa', 'pod-security.kubernetes.io/enforce': 'restricted' },
    },
  };
}

/** An encrypted gp3 class that binds where the pod lands, and boa's volume claim. */
export function storageManifests(volumeGiB: number, backupTag: string): Record<string, unknown>[] {
  return [
    {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: STORAGE_CLASS, labels: { 'app.kubernetes.io/name': 'boa' } },
      provisioner: 'ebs.csi.aws.com',
      // The tag selects the volume for AWS Backup (infra/backup.ts): daily snapshots kept 7 days.
      parameters: {
        type: 'gp3',
        encrypted: 'true',
        'csi.storage.k8s.io/fstype': 'ext4',
        tagSpecification_1: `${BACKUP_TAG_KEY}=${backupTag}`,
      },
      volumeBindingMode: 'WaitForFirstConsumer',
      // Retain: deleting the claim, the namespace or the stack never deletes boa's ledger and jobs.
      reclaimPolicy: 'Retain',
      allowVolumeExpansion: true,
    },
    {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'boa-data', namespace: BOA_NAMESPACE, labels },
      spec: {
        accessModes: ['ReadWriteOnce'],
        storageClassName: STORAGE_CLASS,
        resources: { requests: { storage: `${volumeGiB}Gi` } },
      },
    },
  ];
}

/** Boot's own listing and adoption, before the first tick, on AWS's bounded retries (about a minute a call). */
export const BOOT_SECONDS = 5 * 60;
const STARTUP_PERIOD_SECONDS = 5;
/**
 * How long the startup probe waits for boot and the first tick: a first tick over a dozen AWS calls and
 * pages can pass 5 minutes, and a restart starts it over, so it gets the hung limit any tick gets.
 */
export const STARTUP_SECONDS = BOOT_SECONDS + HUNG_AFTER_MS / 1000;

/**
 * How long a rollout may go without progress before the Deployment reports it failed (Progressing False,
 * ProgressDeadlineExceeded, which ends `kubectl rollout status` with exit 1): the startup probe's
 * allowance and 10 minutes for what comes before it (the old pod's grace, the volume moved from a lost
 * node, which Kubernetes force-detaches after 6 minutes, the image pull). Kubernetes' default, 10 minutes,
 * failed a start the startup probe still allows (found in a deploy review).
 */
export const PROGRESS_DEADLINE_SECONDS = STARTUP_SECONDS + 10 * 60;

/** One replica (SQLite has one writer), replaced rather than rolled since its volume attaches to one node. */
export function deploymentManifest(options: BoaManifestOptions): Record<string, unknown> {
  // The operator token is read from Secrets Manager (BOA_TOKEN_SECRET_ARN in options.env), not from here.
  const env = Object.entries({
    BOA_CLOUD: 'aws',
    BOA_HOST: '0.0.0.0',
    BOA_PORT: String(BOA_PORT),
    BOA_DATA_DIR,
    ...options.env,
  }).map(([name, value]) => ({ name, value }));
  const probe = (path: string, periodSeconds: number, failureThreshold: number) => ({
    httpGet: { path, port: 'http' },
    periodSeconds,
    failureThreshold,
    timeoutSeconds: 3,
  });
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'boa', namespace: BOA_NAMESPACE, labels },
    spec: {
      replicas: 1,
      strategy: { type: 'Recreate' },
      progressDeadlineSeconds: PROGRESS_DEADLINE_SECONDS,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          serviceAccountName: BOA_SERVICE_ACCOUNT,
          nodeSelector: { ...options.nodeSelector },
          terminationGracePeriodSeconds: 60,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: 1000,
            runAsGroup: 1000,
            fsGroup: 1000,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          containers: [
            {
              name: 'boa',
              image: options.image,
              ports: [{ name: 'http', containerPort: BOA_PORT }],
              env,
              // Until boot and the first tick end, every request, /healthz too, is 503: the first tick
              // gets what liveness gives any tick, and boot its own listing besides (STARTUP_SECONDS).
              startupProbe: probe(
                '/healthz',
                STARTUP_PERIOD_SECONDS,
                STARTUP_SECONDS / STARTUP_PERIOD_SECONDS,
              ),
              livenessProbe: probe('/healthz', 20, 3),
              readinessProbe: probe('/readyz', 10, 3),
              resources: { requests: { cpu: '250m', memory: '512Mi' }, limits: { memory: '1Gi' } },
              securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
              volumeMounts: [{ name: 'data', mountPath: BOA_DATA_DIR }],
            },
          ],
          volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'boa-data' } }],
        },
      },
    },
  };
}

// KEEP_REACHABLE: boa is one replica, so a Service that drops it when /readyz fails (ticks failing for
// three intervals) leaves nothing: the jobs' /progress and /complete calls would fail, and `boa status`
// and a Prometheus scrape would lose boa exactly when its failure counters matter. Its Services keep
// the pod while it is not ready; readiness still shows on the pod (its Ready condition) and in rollouts.

/**
 * Where the jobs' pods reach boa (BOA_PUBLIC_URL, handed to them as BOA_URL): the ClusterIP Service
 * `boa-internal` on port 8080, since boa's own default (http://127.0.0.1:8080) would point a pod at
 * itself. Not `boa`: exposed, that one listens on 80 or 443 (and the VPC CNI's network policies need a
 * Service port equal to the container port). The same with or without exposeApi: a running pod's BOA_URL
 * never changes, so before 2026-12-02, when the default was `boa` and only an exposed stack had
 * `boa-internal`, turning exposeApi on or off cut every running job off from boa until its next
 * generation (found in a deploy review).
 */
export const BOA_INTERNAL_SERVICE = 'boa-internal';
export const IN_CLUSTER_URL = `http://${BOA_INTERNAL_SERVICE}.${BOA_NAMESPACE}.svc.cluster.local:${BOA_PORT}`;

/** The ClusterIP Service the jobs use (IN_CLUSTER_URL), whatever `boa` is. */
export function internalServiceManifest(): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: BOA_INTERNAL_SERVICE, namespace: BOA_NAMESPACE, labels },
    spec: {
      type: 'ClusterIP',
      selector: labels,
      ports: [{ name: 'http', port: BOA_PORT, targetPort: 'http', protocol: 'TCP' }],
      // The jobs report progress and completion here while ticks fail (KEEP_REACHABLE).
      publishNotReadyAddresses: true,
    },
  };
}

/**
 * A ClusterIP service by default (reach it with `kubectl port-forward`); with a load balancer, an
 * internet-facing NLB whose listener admits only the given CIDRs, TLS on 443 when a certificate is given.
 */
export function serviceManifest(options: Pick<BoaManifestOptions, 'loadBalancer'>): Record<string, unknown> {
  const lb = options.loadBalancer;
  const port = lb ? (lb.certificateArn ? 443 : 80) : BOA_PORT;
  const annotations: Record<string, string> = lb
    ? {
        'service.beta.kubernetes.io/aws-load-balancer-type': 'nlb',
        ...(lb.certificateArn
          ? {
              'service.beta.kubernetes.io/aws-load-balancer-ssl-cert': lb.certificateArn,
              'service.beta.kubernetes.io/aws-load-balancer-ssl-ports': '443',
            }
          : {}),
      }
    : {};
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'boa', namespace: BOA_NAMESPACE, labels, annotations },
    spec: {
      type: lb ? 'LoadBalancer' : 'ClusterIP',
      selector: labels,
      ports: [{ name: 'http', port, targetPort: 'http', protocol: 'TCP' }],
      // An operator needs `boa status` and /metrics most while ticks fail (KEEP_REACHABLE).
      publishNotReadyAddresses: true,
      ...(lb ? { loadBalancerSourceRanges: [...lb.sourceRanges] } : {}),
    },
  };
}
