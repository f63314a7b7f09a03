import {
  type CoreV1Api,
  type Informer,
  type KubeConfig,
  ListWatch,
  type ObjectCache,
  PatchStrategy,
  setHeaderOptions,
  type V1Node,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { Clock } from '../../service/ports.ts';
import { coreApi, watcher } from '../kubernetes/client.ts';
import { KUBE_RETRY, withKubeRetry } from '../kubernetes/retry.ts';
import type { RetryContext } from '../retry.ts';
import { realSleep, type Sleep } from '../time.ts';
import { type ClusterNode, type ClusterNodes, clusterNodeFrom, type NodeObject } from './cluster-nodes.ts';

export interface KubeClusterNodesOptions {
  readonly logger: Logger;
  readonly clock: Clock;
  /** A full relist at least this often, whatever the watch says (default 5 minutes). */
  readonly resyncMs?: number;
  /** Wait before restarting a watch that failed (default 5 s). */
  readonly restartMs?: number;
  /** The retry layer's waits (tests skip them); default real time. */
  readonly sleep?: Sleep;
  readonly random?: () => number;
  /** A request that has not been answered after this long is retried (default 10 s). */
  readonly requestTimeoutMs?: number;
}

/**
 * The cluster's Nodes, kept by a watch (client-node's informer: list, then watch from its version) with
 * a periodic relist, the way controllers keep them: a read relists first when the watch is down or the
 * resync is due, so the node reconciler compares against what is, not what it last heard.
 */
export class KubeClusterNodes implements ClusterNodes {
  private readonly api: CoreV1Api;
  private readonly informer: Informer<V1Node> & ObjectCache<V1Node>;
  private readonly nodes = new Map<string, ClusterNode>();
  private watching = false;
  private started = false;
  private closed = false;
  private listedAt = Number.NEGATIVE_INFINITY;
  private restart: NodeJS.Timeout | undefined;
  /** Errors the informer reported: its start() reports a failed list this way, it does not throw. */
  private errors = 0;
  private readonly retry: RetryContext;

  constructor(
    kubeConfig: KubeConfig,
    private readonly options: KubeClusterNodesOptions,
  ) {
    this.api = coreApi(kubeConfig, options.requestTimeoutMs ?? 10_000);
    this.retry = {
      sleep: options.sleep ?? realSleep,
      random: options.random ?? Math.random,
      logger: options.logger,
      policy: KUBE_RETRY,
    };
    // Its watch bounded like the executor's: a first read must not wait forever on a silent server.
    // Not makeInformer: its Watch resumes a watch the server closes at once, at once, in a loop.
    this.informer = new ListWatch(
      '/api/v1/nodes',
      watcher(kubeConfig, options.requestTimeoutMs ?? 10_000),
      () => this.api.listNode(),
      false,
    );
    const put = (node: V1Node) => {
      const view = clusterNodeFrom(node as NodeObject);
      if (view) this.nodes.set(view.name, view);
    };
    this.informer.on('add', put);
    this.informer.on('update', put);
    this.informer.on('delete', (node) => {
      if (node.metadata?.name) this.nodes.delete(node.metadata.name);
    });
    this.informer.on('connect', () => {
      this.watching = true;
    });
    this.informer.on('error', (error: unknown) => {
      this.errors++;
      this.watching = false;
      if (this.closed) return;
      this.options.logger.warn(
        { event: 'nodes.watch-failed', error: (error as Error)?.message ?? String(error) },
        'Node watch failed; restarting',
      );
      this.restart = setTimeout(() => void this.startWatch(), this.options.restartMs ?? 5_000);
    });
  }

  async list(): Promise<readonly ClusterNode[]> {
    if (!this.started) {
      this.started = true;
      await this.startWatch();
    }
    const now = this.options.clock.now();
    if (!this.watching || now - this.listedAt >= (this.options.resyncMs ?? 300_000)) await this.relist();
    return [...this.nodes.values()];
  }

  async cordon(name: string): Promise<void> {
    await this.setUnschedulable(name, true);
  }

  async uncordon(name: string): Promise<void> {
    await this.setUnschedulable(name, false);
  }

  private async setUnschedulable(name: string, unschedulable: boolean): Promise<void> {
    // A merge patch carries no resourceVersion, so it never conflicts: repeating it is harmless.
    await withKubeRetry(
      unschedulable ? 'cordon node' : 'uncordon node',
      () =>
        this.api.patchNode(
          { name, body: { spec: { unschedulable } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        ),
      this.retry,
    );
    const node = this.nodes.get(name);
    if (node) this.nodes.set(name, { ...node, unschedulable });
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.restart) clearTimeout(this.restart);
    await this.informer.stop();
  }

  private async startWatch(): Promise<void> {
    if (this.closed) return;
    const errors = this.errors;
    try {
      await this.informer.start();
      // A list or watch that failed inside start() was reported as an error (watch down, restart
      // scheduled): the next read must list, not take the empty or stale cache for the cluster.
      if (this.errors !== errors) return;
      this.watching = true;
      this.listedAt = this.options.clock.now();
    } catch (error) {
      this.watching = false;
      this.options.logger.warn(
        { event: 'nodes.watch-failed', error: (error as Error).message },
        'Node watch could not start; reading by list',
      );
    }
  }

  private async relist(): Promise<void> {
    const listed = await withKubeRetry('list nodes', () => this.api.listNode(), this.retry);
    this.nodes.clear();
    for (const node of listed.items) {
      const view = clusterNodeFrom(node as NodeObject);
      if (view) this.nodes.set(view.name, view);
    }
    this.listedAt = this.options.clock.now();
  }
}
