// A job's headless Service created (or adopted) and deleted: apart from the reconcile deciding when.
import type { CoreV1Api, V1Service } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { RetryContext } from '../retry.ts';
import type { ObjectCache } from './cache.ts';
import type { KubernetesExecutorConfig } from './config.ts';
import { serviceManifest } from './pods.ts';
import { kindOf, withKubeRetry } from './retry.ts';

/** What the Service writes need of the KubernetesExecutor. */
export interface ServiceWriteDeps {
  readonly api: CoreV1Api;
  readonly config: KubernetesExecutorConfig;
  readonly retry: RetryContext;
  readonly logger: Logger;
  /** The executor's cache of the Services boa owns: what is written goes there at once. */
  readonly services: ObjectCache<V1Service>;
  /** The caches heard less than is: each lists again at its next read. */
  readonly relist: () => void;
}

/** The writes of jobs' headless Services, each retried as every Kubernetes call. */
export class ServiceWrites {
  constructor(private readonly deps: ServiceWriteDeps) {}

  /**
   * The job's Service, for its pods to be owned by: read first when the cache has it, since pods owned
   * by one deleted since (kubectl delete svc, the watch gone quiet) are collected as soon as they are
   * made (found in review). One gone, or another of its name, has every cache list again. A string:
   * why the API server refused it, for the replicas to fail with.
   */
  async ensure(jobId: number, known: V1Service | undefined): Promise<V1Service | string> {
    const namespace = this.deps.config.namespace;
    const body = serviceManifest(jobId, this.deps.config);
    const name = body.metadata!.name!;
    if (known?.metadata?.uid && !known.metadata.deletionTimestamp) {
      const current = await this.read(name);
      if (current?.metadata?.uid === known.metadata.uid) return this.usable(jobId, current, known);
      this.deps.logger.warn(
        { event: 'kube.service.changed', jobId, name, uid: known.metadata.uid, now: current?.metadata?.uid },
        'job service deleted or replaced since last heard; listing again',
      );
      this.deps.relist();
    }
    try {
      const created = await withKubeRetry(
        'create service',
        () => this.deps.api.createNamespacedService({ namespace, body }),
        this.deps.retry,
      );
      this.deps.logger.info(
        { event: 'kube.service.created', jobId, name: body.metadata!.name },
        'job service created',
      );
      this.deps.services.put(created);
      return created;
    } catch (error) {
      const kind = kindOf(error);
      // Refused as the object (an admission check; a quota on Services, which no grace period frees): as
      // a refused Secret or policy is. Thrown, it failed the step each pass, and the job waited out its
      // start deadline with "no replica was made" at every restart (found in review).
      if (kind === 'refused' || kind === 'quota') return this.refused(jobId, name, error as Error);
      if (kind !== 'exists') throw error;
      const existing = await this.read(name);
      if (!existing) throw error; // deleted again meanwhile: the next pass creates it
      this.deps.services.put(existing);
      return this.usable(jobId, existing, existing);
    }
  }

  private refused(jobId: number, name: string, error: Error): string {
    const reason = `job service rejected by the API server: ${error.message}`;
    this.deps.logger.error({ event: 'kube.service.rejected', jobId, name, reason }, 'job service rejected');
    return reason;
  }

  /**
   * `current`, the Service the API server has, unless it is being deleted (a finalizer holds it: a
   * LoadBalancer's, a policy engine's): pods owned by it would be collected with it once it goes, so
   * none is made until it is gone and boa makes it anew. The job's start deadline runs meanwhile, as for
   * any step that fails for the job's own sake. `returned`: what to give back when it is usable.
   */
  private usable(jobId: number, current: V1Service, returned: V1Service): V1Service {
    const since = current.metadata?.deletionTimestamp;
    if (!since) return returned;
    this.deps.services.put(current);
    const finalizers = current.metadata?.finalizers ?? [];
    throw new Error(
      `job ${jobId}'s Service ${current.metadata?.name} is being deleted (since ` +
        `${new Date(since).toISOString()}${finalizers.length > 0 ? `, held by ${finalizers.join(', ')}` : ''}): ` +
        'its pods are made once it is gone, with a new one',
    );
  }

  /** The Service as the API server has it now; undefined when there is none. */
  private async read(name: string): Promise<V1Service | undefined> {
    const namespace = this.deps.config.namespace;
    try {
      return await withKubeRetry(
        'read service',
        () => this.deps.api.readNamespacedService({ name, namespace }),
        this.deps.retry,
      );
    } catch (error) {
      if (kindOf(error) === 'not-found') return undefined;
      throw error;
    }
  }

  async delete(service: V1Service): Promise<void> {
    const name = service.metadata!.name!;
    const namespace = this.deps.config.namespace;
    try {
      await withKubeRetry(
        'delete service',
        () => this.deps.api.deleteNamespacedService({ name, namespace, propagationPolicy: 'Background' }),
        this.deps.retry,
      );
      this.deps.logger.info({ event: 'kube.service.deleted', name }, 'job service deleted');
    } catch (error) {
      if (kindOf(error) !== 'not-found') throw error;
    }
    this.deps.services.forget(name);
  }
}
