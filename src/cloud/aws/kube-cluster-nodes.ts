import {
  type CoreV1Api,
  type KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type V1Node,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { Clock } from '../../service/ports.ts';
import { ObjectCache } from '../kubernetes/cache.ts';
import { coreApi, watcher } from '../kubernetes/client.ts';
import { KUBE_RETRY, withKubeRetry } from '../kubernetes/retry.ts';
import type { RetryContext } from '../retry.ts';
import { realSleep, type Sleep } from '../time.ts';
import { type ClusterNode, type ClusterNodes, clusterNodeFrom, type NodeObject } from './cluster-nodes.ts';
import { FOREIGN_LIST_TIMEOUT_MS, type ForeignGpus, ForeignGpuPods } from './foreign-gpu-pods.ts';

export interface KubeClusterNodesOptions {
  readonly logger: Logger;
  readonly clock: Clock;
  /** A full relist, the watch started again, at least this often (default 5 minutes). */
  readonly resyncMs?: number;
  /** The retry layer's waits (tests skip them); default real time. */
  readonly sleep?: Sleep;
  readonly random?: () => number;
  /** A request that has not been answered after this long is retried (default 10 s). */
  readonly requestTimeoutMs?: number;
}

/**
 * The cluster's Nodes, kept as the executor keeps its pods (cache.ts): a list, then a watch from its
 * version that asks the server to end it within 5 minutes, resumed when it ends; a read lists again,
 * and starts the watch again, when the watch is down or the resync is due. Before (found in review),
 * client-node's informer watched with no timeout and a relist left its watch as it was: a watch gone
 * quiet without closing left nodes just Ready unused, and ones gone NotReady given jobs, until each
 * resync.
 */
export class KubeClusterNodes implements ClusterNodes {
  private readonly api: CoreV1Api;
  private readonly cache: ObjectCache<V1Node>;
  private readonly retry: RetryContext;
  private readonly foreign: ForeignGpuPods;

  constructor(kubeConfig: KubeConfig, options: KubeClusterNodesOptions) {
    const timeoutMs = options.requestTimeoutMs ?? 10_000;
    this.api = coreApi(kubeConfig, timeoutMs);
    this.retry = {
      sleep: options.sleep ?? realSleep,
      random: options.random ?? Math.random,
      logger: options.logger,
      policy: KUBE_RETRY,
    };
    // Its own client: a list of a node's pods waits a few seconds at most, not the 10 s of other calls.
    const podsApi = coreApi(kubeConfig, Math.min(timeoutMs, FOREIGN_LIST_TIMEOUT_MS));
    this.foreign = new ForeignGpuPods(podsApi, this.retry, options.logger, options.clock);
    this.cache = new ObjectCache<V1Node>({
      resource: 'nodes',
      list: () => this.api.listNode(),
      watch: watcher(kubeConfig, timeoutMs),
      retry: this.retry,
      logger: options.logger,
      resyncMs: options.resyncMs ?? 300_000,
      now: () => options.clock.now(),
    });
  }

  async list(): Promise<readonly ClusterNode[]> {
    return (await this.cache.current()).flatMap((node) => clusterNodeFrom(node as NodeObject) ?? []);
  }

  foreignGpus(names: readonly string[]): Promise<ReadonlyMap<string, ForeignGpus>> {
    return this.foreign.read(names);
  }

  async cordon(name: string): Promise<void> {
    await this.setUnschedulable(name, true);
  }

  async uncordon(name: string): Promise<void> {
    await this.setUnschedulable(name, false);
  }

  private async setUnschedulable(name: string, unschedulable: boolean): Promise<void> {
    // A merge patch carries no resourceVersion, so it never conflicts: repeating it is harmless.
    const patched = await withKubeRetry(
      unschedulable ? 'cordon node' : 'uncordon node',
      () =>
        this.api.patchNode(
          { name, body: { spec: { unschedulable } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        ),
      this.retry,
    );
    // Seen at once, before its watch event.
    this.cache.put(patched);
  }

  async close(): Promise<void> {
    this.cache.close();
  }
}
