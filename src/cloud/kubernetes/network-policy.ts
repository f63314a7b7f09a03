import type { NetworkingV1Api, V1NetworkPolicy, V1Service } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { RetryContext } from '../retry.ts';
import type { KubernetesExecutorConfig } from './config.ts';
import { createOnce } from './create-once.ts';
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
      name: networkPolicyName(jobId),
      namespace: config.namespace,
      labels: jobLabels(jobId),
      ownerReferences: ownedByService(jobId, owner.uid),
    },
    // `_from`: the client's name for `from` (a reserved word), which it sends as `from`.
    spec: { podSelector: job, policyTypes: ['Ingress'], ingress: [{ _from: [{ podSelector: job }] }] },
  };
}

/**
 * The jobs' NetworkPolicies, created (createOnce) before a job's pods each time they are to be created:
 * owned by the job's Service and collected with it; AlreadyExists is done, since the content depends only
 * on the job id. A job seen running without this executor having ensured its policy (pods made before boa
 * made policies: an upgrade) gets one create too, once.
 */
export class JobNetworkPolicies {
  private readonly ensured = new Set<number>();

  constructor(
    private readonly api: NetworkingV1Api,
    private readonly config: KubernetesExecutorConfig,
    private readonly retry: RetryContext,
    private readonly logger: Logger,
  ) {}

  /** Returns why the API server refused the policy. */
  async ensure(jobId: number, service: V1Service): Promise<string | undefined> {
    const body = networkPolicyManifest(jobId, { uid: service.metadata!.uid! }, this.config);
    const namespace = this.config.namespace;
    const create = () => this.api.createNamespacedNetworkPolicy({ namespace, body });
    const object = { what: 'network policy', event: 'networkpolicy', jobId, name: body.metadata!.name! };
    const refused = await createOnce({ ...object, create }, this.retry, this.logger);
    if (!refused) this.ensured.add(jobId);
    return refused;
  }

  has(jobId: number): boolean {
    return this.ensured.has(jobId);
  }

  /** Forgets the jobs no longer wanted (a job id wanted again is ensured again). */
  keepOnly(wanted: ReadonlyMap<number, unknown>): void {
    for (const jobId of this.ensured) if (!wanted.has(jobId)) this.ensured.delete(jobId);
  }
}
