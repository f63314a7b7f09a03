/** Where and how the Kubernetes executor runs jobs' pods (the service config's `kubernetes` section). */
export interface KubernetesExecutorConfig {
  /** Namespace of the jobs' pods and services (not boa's own). */
  readonly namespace: string;
  /** Service account the pods run as; default: the namespace's `default`. */
  readonly serviceAccountName?: string;
  /** Secrets for pulling private images. */
  readonly imagePullSecrets: readonly string[];
  /** Pod terminationGracePeriodSeconds: SIGTERM to SIGKILL, time to checkpoint. */
  readonly terminationGraceSeconds: number;
  /** Port rank 0 listens on for rendezvous (MASTER_PORT). */
  readonly rendezvousPort: number;
  /** Full relist of pods and services, besides the watch (level-triggered safety net). */
  readonly resyncSeconds: number;
  /** Timeout of one API request; of a watch, the wait for the server's answer (not the stream). */
  readonly requestTimeoutMs: number;
  /** API calls in flight at once during one reconcile. */
  readonly concurrency: number;
  /**
   * An ended pod of a job no longer run (failed for good, or waiting out a restart's backoff) is kept
   * this long after its exit, for `boa jobs logs` and `kubectl logs`: it holds no GPUs.
   */
  readonly endedPodRetentionSeconds: number;
}

export const DEFAULT_JOBS_NAMESPACE = 'boa-jobs';

export const KUBERNETES_DEFAULTS: KubernetesExecutorConfig = {
  namespace: DEFAULT_JOBS_NAMESPACE,
  imagePullSecrets: [],
  terminationGraceSeconds: 120,
  rendezvousPort: 29500,
  resyncSeconds: 300,
  requestTimeoutMs: 10_000,
  concurrency: 16,
  endedPodRetentionSeconds: 3600,
};

export function kubernetesConfig(partial: Partial<KubernetesExecutorConfig> = {}): KubernetesExecutorConfig {
  const defined = Object.fromEntries(Object.entries(partial).filter(([, v]) => v !== undefined));
  return { ...KUBERNETES_DEFAULTS, ...defined };
}
