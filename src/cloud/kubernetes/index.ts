/**
 * The Kubernetes executor: jobs' replicas as pods on the nodes boa placed them on. Imported on its own
 * (dynamic import from the service's boot) so the local default never loads @kubernetes/client-node.
 */
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { Executor } from '../../service/ports.ts';
import { defaultKubeConfig } from './client.ts';
import { kubernetesConfig, type KubernetesExecutorConfig } from './config.ts';
import { KubernetesExecutor, type KubernetesExecutorDeps } from './executor.ts';

export {
  DEFAULT_JOBS_NAMESPACE,
  KUBERNETES_DEFAULTS,
  kubernetesConfig,
  type KubernetesExecutorConfig,
} from './config.ts';
export { KubernetesExecutor, type KubernetesExecutorDeps } from './executor.ts';
export { CLAIM_LEASE_SECONDS, JobsNamespaceError, NamespaceClaimedError } from './namespace-claim.ts';
export { CLAIM_LEASE_NAME, LABELS, OWNED_SELECTOR, podName, rank0Address, serviceName } from './names.ts';

/** What the executor reads of the service config: its `kubernetes` section and the grace period. */
export interface KubernetesServiceConfig {
  readonly terminationGraceSeconds?: number;
  readonly kubernetes?: Partial<KubernetesExecutorConfig>;
  /** The service's data folder: pods' logs are kept under its `jobs` as boa deletes them. */
  readonly dataDir?: string;
}

/**
 * The executor for `--executor kubernetes`: the jobs namespace, service account and pull secrets from
 * `config.kubernetes`, the grace period from `config.terminationGraceSeconds` (unless the section sets
 * its own), the cluster from the pod's service account or KUBECONFIG. `overrides.instanceId` is this
 * boa's id from its data dir (service/instance-id.ts, boot.ts), which its claim on the jobs namespace names.
 */
export function createKubernetesExecutor(
  config: KubernetesServiceConfig,
  logger: Logger,
  overrides: Partial<Omit<KubernetesExecutorDeps, 'logger'>> &
    Pick<KubernetesExecutorDeps, 'instanceId'> & { kubeConfig?: KubeConfig },
): Executor {
  const settings = kubernetesConfig({
    terminationGraceSeconds: config.terminationGraceSeconds,
    ...config.kubernetes,
  });
  const kubeConfig = overrides.kubeConfig ?? defaultKubeConfig();
  // An in-memory store (tests) keeps nothing on disk, pods' logs neither.
  const keepLogs = config.dataDir !== undefined && config.dataDir !== ':memory:';
  const logArchiveDir = overrides.logArchiveDir ?? (keepLogs ? join(config.dataDir!, 'jobs') : undefined);
  return new KubernetesExecutor(settings, { ...overrides, kubeConfig, logger, logArchiveDir });
}
