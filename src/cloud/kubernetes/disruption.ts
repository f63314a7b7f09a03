// What a pod says of the controller that stopped it: the DisruptionTarget condition Kubernetes sets
// (a drain's eviction, the taint manager, the pod garbage collector) before it deletes a pod.
import type { V1Pod } from '@kubernetes/client-node';

const disruptionTargetOf = (pod: V1Pod) =>
  pod.status?.conditions?.find((c) => c.type === 'DisruptionTarget' && c.status === 'True');

/**
 * A pod failed by a controller while its container still ran, as the pod garbage collector marks the
 * pods of a deleted node (DisruptionTarget DeletionByPodGC) before deleting them: no kubelet is left to
 * end the container, so its run is up to the mark, or up to when it was marked not Ready (what the node
 * lifecycle controller does to the pods of a node gone silent), if that came after its start. Unknown,
 * the service counted it a failure (interruptedMinRunSeconds) and the job's restarts were used for a
 * node AWS took away.
 */
export function runUntilMarked(pod: V1Pod, startedAt: Date | undefined): number | undefined {
  const target = disruptionTargetOf(pod);
  if (!startedAt || !target?.lastTransitionTime) return undefined;
  const start = new Date(startedAt).getTime();
  const marked = new Date(target.lastTransitionTime).getTime();
  const unready = pod.status?.conditions?.find((c) => c.type === 'Ready' && c.status !== 'True');
  const silentAt = unready?.lastTransitionTime ? new Date(unready.lastTransitionTime).getTime() : undefined;
  const end = silentAt !== undefined && silentAt >= start && silentAt < marked ? silentAt : marked;
  return Math.max(0, end - start);
}

/** What marked the pod for its stop (a drain, the taint manager, the pod garbage collector), if any did. */
export function disruptionOf(pod: V1Pod): string | undefined {
  const target = disruptionTargetOf(pod);
  if (!target) return undefined;
  return `DisruptionTarget: ${target.reason ?? 'disrupted'}${target.message ? ` (${target.message})` : ''}`;
}
