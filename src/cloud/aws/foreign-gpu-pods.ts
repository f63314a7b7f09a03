import type { CoreV1Api, V1Container, V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { LABELS, MANAGED_BY } from '../kubernetes/names.ts';
import { withKubeRetry } from '../kubernetes/retry.ts';
import type { RetryContext } from '../retry.ts';

const GPU = 'nvidia.com/gpu';

/** GPUs on a node held by pods boa did not create, and those pods (namespace/name). */
export interface ForeignGpus {
  readonly gpus: number;
  readonly pods: readonly string[];
}

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
 */
export class ForeignGpuPods {
  /** The last answer per node: a list that fails keeps it rather than reading the node as free. */
  private readonly last = new Map<string, ForeignGpus>();
  /** Pods already logged, so each is named once (pruned to those still there). */
  private readonly logged = new Set<string>();

  constructor(
    private readonly api: CoreV1Api,
    private readonly retry: RetryContext,
    private readonly logger: Logger,
  ) {}

  async read(nodeNames: readonly string[]): Promise<ReadonlyMap<string, ForeignGpus>> {
    const out = new Map<string, ForeignGpus>();
    const seen = new Set<string>();
    for (const node of nodeNames) {
      try {
        const listed = await withKubeRetry(
          'list pods on node',
          () =>
            this.api.listPodForAllNamespaces({
              fieldSelector: `spec.nodeName=${node},status.phase!=Succeeded,status.phase!=Failed`,
            }),
          this.retry,
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
              'a GPU pod boa did not create is on its node: its GPUs are not placed on, the node is kept',
            );
          }
        }
        this.last.set(node, { gpus, pods: names });
      } catch (error) {
        this.logger.warn(
          { event: 'node.foreign-pods-unknown', node, error: (error as Error).message },
          "could not list the node's pods; keeping the last count",
        );
        for (const key of this.logged) if (key.startsWith(`${node} `)) seen.add(key);
      }
      const known = this.last.get(node);
      if (known && known.gpus > 0) out.set(node, known);
    }
    for (const key of this.logged) if (!seen.has(key)) this.logged.delete(key);
    for (const node of this.last.keys()) if (!nodeNames.includes(node)) this.last.delete(node);
    return out;
  }
}
