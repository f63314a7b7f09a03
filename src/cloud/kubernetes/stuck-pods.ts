// Pods stuck Terminating on a node that is gone or not Ready: force-deleted, as `kubectl delete --force
// --grace-period=0` does, so the job's next generation (which waits for them) can start.
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { identityOf } from './names.ts';
import { forgetUnlisted } from './pod-uids.ts';
import { kindOf, withKubeRetry } from './retry.ts';
import type { NamespacedStepDeps } from './step-deps.ts';

/**
 * How long past its grace (deletionTimestamp is when the grace ends) a pod is left before boa forces
 * it: a live kubelet confirms a stop within seconds of its SIGKILL, and the API server's clock (which
 * set deletionTimestamp) may be ahead of boa's by some seconds; a minute leaves room for both, yet
 * frees the job's GPUs within a tick or two of its grace.
 */
export const FORCE_DELETE_MARGIN_MS = 60_000;

/**
 * How long a node must have been not Ready before its stuck pods are forced: Kubernetes' own default
 * toleration of an unreachable or not-ready node (300 s, the DefaultTolerationSeconds admission
 * plugin), after which it evicts the node's pods itself. A kubelet only cut off from the API server
 * for less keeps running the container it never heard was deleted, and forcing its pod sooner would
 * start the replacement beside it, two writers of one checkpoint (found in review).
 */
export const NOT_READY_FORCE_MS = 300_000;

/**
 * The pod's node, as its list by name shows it: gone, or its Ready condition ('True' when Ready) and
 * since when (ms; undefined when the node says nothing).
 */
type NodeState =
  | { readonly gone: true }
  | { readonly gone: false; readonly ready: string; readonly since: number | undefined };

function nodeState(node: V1Node | undefined): NodeState {
  if (!node) return { gone: true };
  const condition = node.status?.conditions?.find((c) => c.type === 'Ready');
  const since = condition?.lastTransitionTime ? new Date(condition.lastTransitionTime).getTime() : undefined;
  // No Ready condition yet: a node still registering, not one known to be down.
  return { gone: false, ready: condition?.status ?? 'True', since };
}

/** Gone, or not Ready for NOT_READY_FORCE_MS: its kubelet is not going to finish the pod's stop. */
function nodeLost(state: NodeState, now: number): boolean {
  if (state.gone) return true;
  return state.ready !== 'True' && state.since !== undefined && now - state.since >= NOT_READY_FORCE_MS;
}

/**
 * Level-triggered: each pass looks at the pods boa owns that are Terminating past their grace by
 * FORCE_DELETE_MARGIN_MS, reads each one's node (a list by name: boa's ClusterRole lists nodes, it
 * gets none), and deletes again with gracePeriodSeconds 0 those whose node is gone or has not been
 * Ready for NOT_READY_FORCE_MS. Only a node's kubelet confirms a graceful stop, so on such a node the
 * pod would stay Terminating for ever. A pod on a Ready node, or one not Ready for less, is left alone:
 * its kubelet is alive or may be, and forcing it could leave its container running beside its
 * replacement. Only pods of boa's jobs (their identity labels) are forced. A force delete the API accepted is not sent again for
 * that pod (its uid); one that failed is tried at the next pass.
 */
export class StuckPods {
  /** Uids of pods whose force delete the API accepted, while they are still listed. */
  private readonly forced = new Set<string>();

  constructor(private readonly deps: NamespacedStepDeps) {}

  /** This pass's steps: one per node holding a pod stuck past its grace and the margin. */
  due(pods: readonly V1Pod[]): (() => Promise<void>)[] {
    const now = this.deps.now();
    forgetUnlisted(this.forced, pods);
    const byNode = new Map<string, V1Pod[]>();
    for (const pod of pods) {
      // Another object carrying boa's managed-by label is not a job's replica (executor.ts).
      if (!identityOf(pod.metadata?.labels)) continue;
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
    if (!nodeLost(state, now)) return;
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
    const gone = await withKubeRetry(
      'force delete pod',
      async () => {
        try {
          await this.deps.api.deleteNamespacedPod({
            name,
            namespace: this.deps.namespace,
            gracePeriodSeconds: 0,
            // This pod, not a newer one of the same name.
            ...(uid ? { body: { preconditions: { uid } } } : {}),
          });
          return false;
        } catch (error) {
          // Gone already: not found, or (the uid precondition failing) a newer pod has its name. Not
          // retried: the retry layer would take a 409 for a write conflict (found in review).
          const kind = kindOf(error);
          if (kind === 'not-found' || kind === 'conflict') return true;
          throw error;
        }
      },
      this.deps.retry,
    );
    if (uid) this.forced.add(uid);
    if (gone) return;
    const grace = pod.metadata?.deletionGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? 30;
    const deletedAt = new Date(pod.metadata!.deletionTimestamp!).getTime() - grace * 1000;
    this.deps.logger.warn(
      {
        event: 'kube.pod.force-deleted',
        pod: name,
        node,
        nodeState: state.gone
          ? 'gone'
          : `Ready=${state.ready}${state.since === undefined ? '' : ` for ${Math.round((now - state.since) / 1000)} s`}`,
        terminatingSeconds: Math.round((now - deletedAt) / 1000),
      },
      'replica pod stuck terminating on a node that is gone or not Ready for 5 minutes; force-deleted',
    );
  }
}
