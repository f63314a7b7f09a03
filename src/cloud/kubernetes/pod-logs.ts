// The pods' logs, kept as boa deletes the pods and read or followed: apart from the executor's pods.
import type { CoreV1Api, KubeConfig, V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { RetryContext } from '../retry.ts';
import { withWatchTimeout } from './client.ts';
import type { KubernetesExecutorConfig } from './config.ts';
import { PodLogArchive } from './log-archive.ts';
import { ReplicaLogs } from './replica-logs.ts';

/** What the pods' logs need of the KubernetesExecutor. */
export interface PodLogsDeps {
  readonly api: CoreV1Api;
  readonly kubeConfig: KubeConfig;
  readonly retry: RetryContext;
  readonly logger: Logger;
  /** Where pods' logs are kept (KubernetesExecutorDeps.logArchiveDir). */
  readonly logArchiveDir?: string;
}

/** The archive of deleted pods' logs, and the reads of replicas' logs (live pods' first, then the archive's). */
export function podLogs(
  config: KubernetesExecutorConfig,
  deps: PodLogsDeps,
  currentPods: () => Promise<readonly V1Pod[]>,
): { archive: PodLogArchive; replicaLogs: ReplicaLogs } {
  const namespace = config.namespace;
  // A stopping pod is followed through its grace period, and a minute more for a slow kubelet.
  const archiveLimitMs = (config.terminationGraceSeconds + 60) * 1000;
  // A log request the API server accepts and never answers (a kubelet on a dead node) ends after
  // requestTimeoutMs, as every other call: the pod's deletion waits for it (found in review).
  const archiveDeps = {
    api: deps.api,
    kubeConfig: withWatchTimeout(deps.kubeConfig, config.requestTimeoutMs),
    namespace,
    retry: deps.retry,
  };
  const archive = new PodLogArchive(
    deps.logArchiveDir,
    { ...archiveDeps, logger: deps.logger },
    archiveLimitMs,
  );
  return { archive, replicaLogs: new ReplicaLogs(archiveDeps, archive, currentPods) };
}
