// A replica's pod is made only on a node the cluster lists: one bound (spec.nodeName) to a node that is
// gone is started by no kubelet, and deleting it waits for the pod garbage collector (40 s) or boa's
// force delete (stuck-pods.ts), which the job's next generation waits for.
import type { CoreV1Api, KubeConfig, V1Node } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { ReplicaSpec, ReplicaStatus } from '../../service/ports.ts';
import type { RetryContext } from '../retry.ts';
import { ObjectCache } from './cache.ts';
import { watcher } from './client.ts';

export interface ListedNodesDeps {
  readonly api: CoreV1Api;
  readonly kubeConfig: KubeConfig;
  readonly requestTimeoutMs: number;
  readonly retry: RetryContext;
  readonly logger: Logger;
  readonly resyncMs: number;
  readonly now: () => number;
}

/**
 * The cluster's Node names, from a list then a watch (cache.ts), read only by a pass that has pods to
 * make: a steady pass makes no request for them. Level-triggered: every pass asks again, so a node gone
 * between the tick that placed a job and the pass (or while boa was down, before its first tick has
 * listed the pool) holds the job's pods back, and a node that comes back (or a new one the watch had not
 * delivered yet) gets them at the next pass.
 */
export class ListedNodes {
  private readonly cache: ObjectCache<V1Node>;

  constructor(deps: ListedNodesDeps) {
    this.cache = new ObjectCache<V1Node>({
      resource: 'nodes',
      list: () => deps.api.listNode(),
      watch: watcher(deps.kubeConfig, deps.requestTimeoutMs),
      retry: deps.retry,
      logger: deps.logger,
      resyncMs: deps.resyncMs,
      now: deps.now,
    });
  }

  /** The names of the nodes the cluster lists now; throws when they cannot be read. */
  async names(): Promise<ReadonlySet<string>> {
    return new Set((await this.cache.current()).flatMap((node) => node.metadata?.name ?? []));
  }

  close(): void {
    this.cache.close();
  }
}

/**
 * A job's missing replicas held back while any of their nodes is not listed, reported starting with why:
 * its ranks on live nodes are not started either, since the job cannot run without the held one and the
 * next tick, seeing the node gone from the pool, moves the whole job. Empty when every node is listed.
 */
export function heldForNodes(missing: readonly ReplicaSpec[], listed: ReadonlySet<string>): ReplicaStatus[] {
  const absent = [...new Set(missing.map((r) => r.node).filter((node) => !listed.has(node)))];
  if (absent.length === 0) return [];
  const reason =
    `node ${absent.join(', ')} is not in the cluster (gone, or not registered yet): the job's pods are ` +
    'made once it is listed, or the job moves when boa sees the node gone from its pool';
  return missing.map(({ jobId, generation, rank, node }) => ({
    jobId,
    generation,
    rank,
    node,
    phase: 'starting' as const,
    reason,
  }));
}
