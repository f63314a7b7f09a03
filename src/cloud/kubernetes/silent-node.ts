// A pod whose node has stopped reporting (its kubelet cut off, the instance hung or gone): what the pod
// shows of it, with no read of the Node. Kubernetes itself takes such a pod as neither started nor ended
// (https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-phase: "Unknown: the state of
// the Pod could not be obtained, typically due to an error in communicating with the node"): it keeps
// its last state until the node comes back, or until the taint eviction deletes it after its
// node.kubernetes.io/unreachable toleration (300 s by default) and the pod garbage collector or the
// kubelet ends it (https://kubernetes.io/docs/concepts/architecture/nodes/#condition).
import type { V1Pod } from '@kubernetes/client-node';

/**
 * The reason word Kubernetes 1.5-1.12 node controllers wrote in status.reason of an unreachable node's
 * pods before deleting them (kubernetes/kubernetes#75311); kubectl still shows such a pod as Unknown.
 */
const NODE_LOST = 'NodeLost';

const withMessage = (what: string, message: string | undefined) =>
  message ? `${what}: ${message.slice(0, 200)}` : what;

/** How the pod shows its node silent, or undefined when it does not. */
export function silentNodeOf(pod: V1Pod): string | undefined {
  const status = pod.status;
  if (status?.phase === 'Unknown') return withMessage('pod phase Unknown', status.message);
  if (status?.reason === NODE_LOST) return withMessage(NODE_LOST, status.message);
  // The node lifecycle controller marks a silent node's pods not Ready (MarkPodsNotReady) and leaves the
  // rest of their status as the kubelet last wrote it: a container still ready. No kubelet writes that
  // pair (boa's pods have no readiness probe), so it is the controller's mark.
  const ready = status?.conditions?.find((c) => c.type === 'Ready');
  const container = status?.containerStatuses?.[0];
  if (status?.phase === 'Running' && ready && ready.status !== 'True' && container?.ready) {
    const since = ready.lastTransitionTime
      ? ` since ${new Date(ready.lastTransitionTime).toISOString()}`
      : '';
    return `marked not Ready by the node controller${since}`;
  }
  return undefined;
}

/**
 * The reason a replica on a silent node is reported with: it keeps the state it had (running if its
 * container had started), since its job may still be running there, and ends only when its pod does.
 */
export function silentNodeReason(node: string, how: string): string {
  return (
    `node ${node || '(none)'} not reporting (${how}): kept as it was until the node is back, or ` +
    'Kubernetes evicts the pod (300 s by default), which boa resumes as an interruption'
  );
}
