import type { NetworkingV1Api, V1NetworkPolicy, V1Service } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { RetryContext } from '../retry.ts';
import type { KubernetesExecutorConfig } from './config.ts';
import { createOnce } from './create-once.ts';
import { type CacheOptions, ObjectCache } from './cache.ts';
import { jobLabels, LABELS, MANAGED_BY, networkPolicyName, ownedByService } from './names.ts';

/**
 * The job's pods accept connections only from the job's own pods (rendezvous, collectives): the jobs
 * namespace's own policy (infra/k8s/network-policies.ts) denies ingress, and this one lets the job in.
 * Selects by job id alone, so it is the same in every generation and never needs an update.
 */
export function networkPolicyManifest(
  jobId: number,
  owner: { uid: string },
  config: KubernetesExecutorConfig,
): V1NetworkPolicy {
  const job = { matchLabels: { [LABELS.managedBy]: MANAGED_BY, [LABELS.jobId]: String(jobId) } };
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: {
      name: networkPolicyName(jobId, owner.uid),
      namespace: config.namespace,
      labels: jobLabels(jobId),
      ownerReferences: ownedByService(jobId, owner.uid),
    },
    // `_from`: the client's name for `from` (a reserved word), which it sends as `from`.
    spec: { podSelector: job, policyTypes: ['Ingress'], ingress: [{ _from: [{ podSelector: job }] }] },
  };
}

/**
 * The jobs' NetworkPolicies, level-triggered: a job whose pods run or are to be made, and whose Service
 * has no policy of its own in the watch-backed cache, gets one created (createOnce; AlreadyExists is
 * done, its content depending only on the job and its Service). So a policy deleted by hand comes back
 * at the next pass, one of a Service made again is never taken for the new one's (names carry the
 * Service's uid), and a job running since before boa made policies (an upgrade) gets one.
 */
export class JobNetworkPolicies {
  readonly cache: ObjectCache<V1NetworkPolicy>;

  constructor(
    private readonly api: NetworkingV1Api,
    private readonly config: KubernetesExecutorConfig,
    private readonly retry: RetryContext,
    private readonly logger: Logger,
    cache: Omit<CacheOptions<V1NetworkPolicy>, 'resource' | 'list'>,
  ) {
    const { namespace } = config;
    this.cache = new ObjectCache<V1NetworkPolicy>({
      ...cache,
      resource: 'networkpolicies',
      list: () => api.listNamespacedNetworkPolicy({ namespace, labelSelector: cache.labelSelector }),
    });
  }

  /** Whether the cache (read this pass) holds the policy of the job's current Service. */
  present(jobId: number, service: V1Service): boolean {
    const policy = this.cache.get(networkPolicyName(jobId, service.metadata!.uid!));
    return policy !== undefined && !policy.metadata?.deletionTimestamp;
  }

  /** Creates the policy unless the cache has it; returns why the API server refused it. */
  async ensure(jobId: number, service: V1Service): Promise<string | undefined> {
    if (this.present(jobId, service)) return undefined;
    const body = networkPolicyManifest(jobId, { uid: service.metadata!.uid! }, this.config);
    const namespace = this.config.namespace;
    const create = async () => {
      // Known at once, so the next pass does not send it again before the watch says so.
      this.cache.put(await this.api.createNamespacedNetworkPolicy({ namespace, body }));
    };
    const object = { what: 'network policy', event: 'networkpolicy', jobId, name: body.metadata!.name! };
    return createOnce({ ...object, create }, this.retry, this.logger);
  }

  close(): void {
    this.cache.close();
  }
}
