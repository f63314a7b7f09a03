import type { CoreV1Api, V1Container, V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { Clock } from '../../service/ports.ts';
import { LABELS, MANAGED_BY } from '../kubernetes/names.ts';
import { kindOf, withKubeRetry } from '../kubernetes/retry.ts';
import { runLimited } from '../kubernetes/run-limited.ts';
import type { RetryContext } from '../retry.ts';

const GPU = 'nvidia.com/gpu';

/** GPUs on a node held by pods boa did not create, and those pods (namespace/name). */
export interface ForeignGpus {
  readonly gpus: number;
  readonly pods: readonly string[];
}

/** How long one read may take and how it spreads its lists. */
export interface ForeignReadLimits {
  /** No list starts after this long from the read's start (default 3 s). */
  readonly budgetMs: number;
  /** Lists in flight at once (default 8). */
  readonly concurrency: number;
}

export const FOREIGN_READ_LIMITS: ForeignReadLimits = { budgetMs: 3_000, concurrency: 8 };
/** Each list's own request timeout (KubeClusterNodes' client for them), so one slow list ends soon. */
export const FOREIGN_LIST_TIMEOUT_MS = 3_000;

function containerGpus(c: V1Container): number {
  // For an extended resource a limit alone sets the request too.
  const value = c.resources?.requests?.[GPU] ?? c.resources?.limits?.[GPU] ?? '0';
  const n = Number.parseInt(String(value), 10);
  return Number.isFinite(n) && n > 0 ? n : 0;
}

/** As the scheduler counts a pod: its containers' sum, or its largest init container if more. */
export function podGpus(pod: V1Pod): number {
  const sum = (pod.spec?.containers ?? []).reduce((a, c) => a + containerGpus(c), 0);
  return Math.max(sum, ...(pod.spec?.initContainers ?? []).map(containerGpus));
}

/**
 * Reads, per GPU node, the GPU pods bound there that boa did not create (found in review: a notebook
 * tolerating the old taint took GPUs boa counted as free, and boa removed its node as idle).
 *
 * A list per node with fieldSelector spec.nodeName, not a watch of every pod in the cluster: the API
 * server answers it from its watch cache by its node-name index (as it does kubelets), so the cost is
 * one small request per GPU node per tick, whatever else the cluster runs; a cluster-wide watch would
 * stream and hold every pod of a shared cluster to see the few on boa's nodes. Needs list on pods
 * cluster-wide (infra/k8s/jobs-rbac.ts NODE_RULES).
 *
 * The tick waits for this read, so it is bounded (found in review: one list at a time, each through the
 * retry layer, stalled a tick 44 minutes over 64 nodes of a slow API server): a few lists at once, one
 * attempt each (the next tick is the retry), none started after `budgetMs`, none after the first failure.
 * A node not read keeps its last count; one never read counts as holding none (fail open: an old stack
 * without pods list must still place jobs), logged once until it is read.
 */
export class ForeignGpuPods {
  /** The last answer per node: a list that fails keeps it rather than reading the node as free. */
  private readonly last = new Map<string, ForeignGpus>();
  /** Pods already logged, so each is named once (pruned to those still there). */
  private readonly logged = new Set<string>();
  /** Nodes whose list failed, logged once until one succeeds. */
  private readonly unknown = new Set<string>();
  /** Whether the last read left nodes unread for want of time or after a failure (logged once). */
  private cut = false;
  /** The node the next read starts at: the first one the last read left out, so every node has its turn. */
  private resumeAt: string | undefined;
  private readonly once: RetryContext;

  constructor(
    private readonly api: CoreV1Api,
    retry: RetryContext,
    private readonly logger: Logger,
    private readonly clock: Clock,
    private readonly limits: ForeignReadLimits = FOREIGN_READ_LIMITS,
  ) {
    this.once = { ...retry, policy: { ...retry.policy, maxAttempts: 1 } };
  }

  async read(nodeNames: readonly string[]): Promise<ReadonlyMap<string, ForeignGpus>> {
    const start = this.clock.now();
    const seen = new Set<string>();
    let failed = false;
    let skipped = 0;
    let firstSkipped: string | undefined;
    const from = Math.max(0, this.resumeAt === undefined ? 0 : nodeNames.indexOf(this.resumeAt));
    const order = [...nodeNames.slice(from), ...nodeNames.slice(0, from)];
    const tasks = order.map((node) => async () => {
      if (failed || this.clock.now() - start >= this.limits.budgetMs) {
        skipped += 1;
        firstSkipped ??= node;
        this.keepLogged(node, seen);
        return;
      }
      try {
        await this.readNode(node, seen);
      } catch (error) {
        failed = true;
        this.failedNode(node, error);
        this.keepLogged(node, seen);
      }
    });
    await runLimited(tasks, this.limits.concurrency);
    if (skipped > 0 && !this.cut)
      this.logger.warn(
        { event: 'node.foreign-pods-partial', skipped, nodes: nodeNames.length, failed },
        "not every GPU node's pods were listed this tick (a failure, or out of time); those keep their last count",
      );
    this.cut = skipped > 0;
    this.resumeAt = firstSkipped;
    const out = new Map<string, ForeignGpus>();
    for (const node of nodeNames) {
      const known = this.last.get(node);
      if (known && known.gpus > 0) out.set(node, known);
    }
    for (const key of this.logged) if (!seen.has(key)) this.logged.delete(key);
    for (const node of this.last.keys()) if (!nodeNames.includes(node)) this.last.delete(node);
    for (const node of this.unknown) if (!nodeNames.includes(node)) this.unknown.delete(node);
    return out;
  }

  private async readNode(node: string, seen: Set<string>): Promise<void> {
    const listed = await withKubeRetry(
      'list pods on node',
      () =>
        this.api.listPodForAllNamespaces({
          fieldSelector: `spec.nodeName=${node},status.phase!=Succeeded,status.phase!=Failed`,
        }),
      this.once,
    );
    const pods = listed.items.filter((p) => p.metadata?.labels?.[LABELS.managedBy] !== MANAGED_BY);
    const names: string[] = [];
    let gpus = 0;
    for (const pod of pods) {
      const held = podGpus(pod);
      if (held === 0) continue;
      const name = `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
      names.push(name);
      gpus += held;
      const key = `${node} ${name} ${pod.metadata?.uid ?? ''}`;
      seen.add(key);
      if (!this.logged.has(key)) {
        this.logged.add(key);
        this.logger.warn(
          { event: 'node.foreign-gpu-pod', node, pod: name, gpus: held },
          "a GPU pod boa did not create is on its node: its GPUs are not placed on, and the node is removed after idle ones (boa's budget pays for it)",
        );
      }
    }
    this.last.set(node, { gpus, pods: names });
    if (this.unknown.delete(node))
      this.logger.info({ event: 'node.foreign-pods-read', node }, "the node's pods are listed again");
  }

  private failedNode(node: string, error: unknown): void {
    if (this.unknown.has(node)) return;
    this.unknown.add(node);
    const forbidden = kindOf(error) === 'forbidden';
    this.logger.warn(
      {
        event: 'node.foreign-pods-unknown',
        node,
        error: (error as Error).message,
        counted: this.last.get(node)?.gpus ?? 0,
        ...(forbidden ? { fix: "redeploy the stack: boa's role needs list on pods cluster-wide" } : {}),
      },
      "could not list the node's pods: its last count is kept (none if never read) until a list succeeds",
    );
  }

  /** A node not read this time: the pods logged for it are still taken as there. */
  private keepLogged(node: string, seen: Set<string>): void {
    for (const key of this.logged) if (key.startsWith(`${node} `)) seen.add(key);
  }
}
