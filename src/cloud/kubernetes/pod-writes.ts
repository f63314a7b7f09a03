// A replica's pod created (or adopted) and deleted: apart from the reconcile deciding when.
import type { CoreV1Api, V1Pod, V1Service } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { ReplicaSpec } from '../../service/ports.ts';
import type { RetryContext } from '../retry.ts';
import type { ObjectCache } from './cache.ts';
import type { KubernetesExecutorConfig } from './config.ts';
import type { CreateRefusals } from './create-refusals.ts';
import { identityOf } from './names.ts';
import { podManifest } from './pods.ts';
import { kindOf, withKubeRetry } from './retry.ts';
import type { VanishedPods } from './vanished.ts';

/** What the pod writes need of the KubernetesExecutor. */
export interface PodWriteDeps {
  readonly api: CoreV1Api;
  readonly config: KubernetesExecutorConfig;
  readonly retry: RetryContext;
  readonly logger: Logger;
  /** The executor's cache of the pods boa owns: what is written goes there at once. */
  readonly pods: ObjectCache<V1Pod>;
  readonly refusals: CreateRefusals;
  readonly vanished: VanishedPods;
}

/** The writes of replicas' pods, each retried as every Kubernetes call. */
export class PodWrites {
  constructor(private readonly deps: PodWriteDeps) {}

  async create(replica: ReplicaSpec, service: V1Service): Promise<void> {
    const namespace = this.deps.config.namespace;
    const body = podManifest(replica, { uid: service.metadata!.uid! }, this.deps.config);
    const name = body.metadata!.name!;
    const log = {
      jobId: replica.jobId,
      generation: replica.generation,
      rank: replica.rank,
      node: replica.node,
      pod: name,
    };
    try {
      const created = await withKubeRetry(
        'create pod',
        () => this.deps.api.createNamespacedPod({ namespace, body }),
        this.deps.retry,
      );
      this.deps.pods.put(created);
      this.deps.refusals.created(name);
      this.deps.logger.info({ event: 'kube.pod.created', ...log }, 'replica pod created');
    } catch (createError) {
      let error = createError;
      if (kindOf(error) === 'exists') {
        // Created by an earlier attempt or an earlier life of the service: adopt it.
        try {
          const existing = await withKubeRetry(
            'read pod',
            () => this.deps.api.readNamespacedPod({ name, namespace }),
            this.deps.retry,
          );
          // Taken as it is, as a listed pod would be: the next pass judges it (waits for one stopping,
          // stops one elsewhere) and creates the replica again once it is gone.
          this.deps.pods.put(existing);
          this.logExisting(existing, replica, service, log);
          return;
        } catch (readError) {
          // The create is not done until the pod is read: an API server down is the job's outage, as
          // for a create that failed (found in review: its start deadline ran on).
          error = readError;
        }
      }
      // Only a refusal of the pod itself fails the replica, and a quota's is waited for. Anything else
      // (a 401 or an RBAC 403 is boa's credentials, not the pod) fails this step; the next pass tries again.
      if (this.deps.refusals.failed(replica, kindOf(error), error as Error, log)) return;
      throw error;
    }
  }

  /** What was found under the replica's name: the pod boa would create, or one the next pass replaces. */
  private logExisting(pod: V1Pod, replica: ReplicaSpec, service: V1Service, log: object): void {
    const logger = this.deps.logger;
    const on = pod.spec?.nodeName;
    const owner = pod.metadata?.ownerReferences?.find((o) => o.controller)?.uid;
    if (pod.metadata?.deletionTimestamp)
      logger.info(
        { event: 'kube.pod.exists-stopping', ...log },
        'a pod of this name is still stopping; created again once gone',
      );
    else if (on !== replica.node)
      logger.info(
        { event: 'kube.pod.exists-elsewhere', ...log, on },
        'a pod of this name runs on another node; stopped and created again',
      );
    else if (owner !== service.metadata?.uid)
      // Its Service deleted with orphans kept, say: boa still stops it itself when the job is done.
      logger.warn(
        { event: 'kube.pod.exists-other-owner', ...log, owner },
        "a pod of this name is not owned by the job's Service; taken as it is",
      );
    else logger.info({ event: 'kube.pod.adopted', ...log }, 'replica pod already existed; adopted');
  }

  /** Deletion with the pod's own terminationGracePeriodSeconds: SIGTERM, then SIGKILL after the grace. */
  async delete(pod: V1Pod): Promise<void> {
    const name = pod.metadata!.name!;
    const namespace = this.deps.config.namespace;
    // Before the call: a DELETE the server applied but whose answer was lost (past the retries) is
    // still boa's, not someone else's (found in review: the job restarted whole). A pod still there
    // next pass is simply seen again.
    this.deps.vanished.deletedByBoa(name);
    try {
      const deleted = await withKubeRetry(
        'delete pod',
        () => this.deps.api.deleteNamespacedPod({ name, namespace }),
        this.deps.retry,
      );
      if (deleted.metadata?.deletionTimestamp) this.deps.pods.put(deleted);
      else this.deps.pods.forget(name);
      this.deps.logger.info({ event: 'kube.pod.deleting', pod: name }, 'replica pod stopping');
    } catch (error) {
      const kind = kindOf(error);
      if (kind !== 'not-found') {
        // The job's next pods wait for this one to go: an API server down is an outage for the job,
        // as a failed create is, not time its start deadline counts (found in review).
        const jobId = identityOf(pod.metadata?.labels)?.jobId;
        if (jobId !== undefined) this.deps.refusals.stepFailed(jobId, kind);
        throw error;
      }
      this.deps.pods.forget(name);
    }
  }
}
