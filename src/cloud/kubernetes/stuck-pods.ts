// Pods stuck Terminating on a node that is gone or not Ready: force-deleted, as `kubectl delete --force
// --grace-period=0` does, so the job's next generation (which waits for them) can start.
import type { CoreV1Api, V1Node, V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { RetryContext } from '../retry.ts';
import { kindOf, withKubeRetry } from './retry.ts';

/**
 * How long past its grace (deletionTimestamp is when the grace ends) a pod is left before boa forces
 * it: a live kubelet confirms a stop within seconds of its SIGKILL, and the API server's clock (which
 * set deletionTimestamp) may be ahead of boa's by some seconds; a minute leaves room for both, yet
 * frees the job's GPUs within a tick or two of its grace.
 */
export const FORCE_DELETE_MARGIN_MS = 60_000;

/** The pod's node, as its list by name shows it: gone, or its Ready condition ('True' when Ready). */
type NodeState = { readonly gone: true } | { readonly gone: false; readonly ready: string };

function nodeState(node: V1Node | undefined): NodeState {
  if (!node) return { gone: true };
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready')?.status;
  return { gone: false, ready: ready ?? 'Unknown' };
}

/**
 * Level-triggered: each pass looks at the pods boa owns that are Terminating past their grace by
 * FORCE_DELETE_MARGIN_MS, reads each one's node (a list by name: boa's ClusterRole lists nodes, it
 * gets none), and deletes again with gracePeriodSeconds 0 those whose node is gone or not Ready. Only a
 * node's kubelet confirms a graceful stop, so on such a node the pod would stay Terminating for ever.
 * A pod on a Ready node is left alone: its kubelet is alive and will finish, and forcing it could leave
 * its container running beside its replacement. A force delete the API accepted is not sent again for
 * that pod (its uid); one that failed is tried at the next pass.
 */
export class StuckPods {
  /** Uids of pods whose force delete the API accepted, while they are still listed. */
  private readonly forced = new Set<string>();

  constructor(
    private readonly deps: {
      readonly api: CoreV1Api;
      readonly namespace: string;
      readonly retry: RetryContext;
      readonly logger: Logger;
      readonly now: () => number;
    },
  ) {}

  /** This pass's steps: one per node holding a pod stuck past its grace and the margin. */
  due(pods: readonly V1Pod[]): (() => Promise<void>)[] {
    const now = this.deps.now();
    const listed = new Set(pods.map((p) => p.metadata?.uid));
    for (const uid of this.forced) if (!listed.has(uid)) this.forced.delete(uid);
    const byNode = new Map<string, V1Pod[]>();
    for (const pod of pods) {
      const until = pod.metadata?.deletionTimestamp;
      if (!until || this.forced.has(pod.metadata?.uid ?? '')) continue;
      if (now < new Date(until).getTime() + FORCE_DELETE_MARGIN_MS) continue;
      const node = pod.spec?.nodeName ?? '';
      byNode.set(node, [...(byNode.get(node) ?? []), pod]);
    }
    return [...byNode].map(
      ([node, stuck]) =>
        () =>
          this.onNode(node, stuck, now),
    );
  }

  private async onNode(node: string, stuck: readonly V1Pod[], now: number): Promise<void> {
    const state = node ? await this.readNode(node) : { gone: true as const };
    if (!state.gone && state.ready === 'True') return;
    for (const pod of stuck) await this.forceDelete(pod, node, state, now);
  }

  private async readNode(name: string): Promise<NodeState> {
    const list = await withKubeRetry(
      'list node',
      () => this.deps.api.listNode({ fieldSelector: `metadata.name=${name}` }),
      this.deps.retry,
    );
    return nodeState(list.items.find((n) => n.metadata?.name === name));
  }

  private async forceDelete(pod: V1Pod, node: string, state: NodeState, now: number): Promise<void> {
    const name = pod.metadata!.name!;
    const uid = pod.metadata?.uid;
    try {
      await withKubeRetry(
        'force delete pod',
        () =>
          this.deps.api.deleteNamespacedPod({
            name,
            namespace: this.deps.namespace,
            gracePeriodSeconds: 0,
            // This pod, not a newer one of the same name.
            ...(uid ? { body: { preconditions: { uid } } } : {}),
          }),
        this.deps.retry,
      );
    } catch (error) {
      if (kindOf(error) !== 'not-found') throw error;
      return; // gone already
    }
    if (uid) this.forced.add(uid);
    const grace = pod.metadata?.deletionGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? 30;
    const deletedAt = new Date(pod.metadata!.deletionTimestamp!).getTime() - grace * 1000;
    this.deps.logger.warn(
      {
        event: 'kube.pod.force-deleted',
        pod: name,
        node,
        nodeState: state.gone ? 'gone' : `Ready=${state.ready}`,
        terminatingSeconds: Math.round((now - deletedAt) / 1000),
      },
      'replica pod stuck terminating on a node that is gone or not Ready; force-deleted',
    );
  }
}
