import type { V1Pod } from '@kubernetes/client-node';
import type { ReplicaStatus } from '../../service/ports.ts';
import { forgetUnlisted } from './pod-uids.ts';

const containerOf = (pod: V1Pod) => pod.status?.containerStatuses?.[0];

/**
 * Pods whose node lost their running container: a node that rebooted within the 5 minutes before
 * Kubernetes evicts its pods (an EC2 maintenance reboot, a GPU fault), or whose runtime lost its state.
 * Its kubelet then fails the pod with the container terminated as ContainerStatusUnknown, exit 137 and
 * no start or finish time. That is no fault of the job: reported failed, it restarted the job after a
 * backoff and counted against maxRestarts (found in review). It is an interruption, as an eviction is,
 * whose run is known from when boa saw the container start: the cache tells this of every pod version
 * (cache.ts: seen). In memory: a pod that ran before a restart of boa has no known run, and
 * interruptedMinRunSeconds then counts it a failure, as before.
 */
export class LostContainers {
  /** Pod uid: when its container started running, as last seen. */
  private readonly startedAt = new Map<string, number>();

  seen(pod: V1Pod): void {
    const uid = pod.metadata?.uid;
    const started = containerOf(pod)?.state?.running?.startedAt;
    if (uid && started) this.startedAt.set(uid, new Date(started).getTime());
  }

  /** Called once a pass with every pod listed: a pod gone is forgotten. */
  note(pods: readonly V1Pod[]): void {
    forgetUnlisted(this.startedAt, pods);
  }

  status(pod: V1Pod, status: ReplicaStatus, now: number): ReplicaStatus {
    const terminated = containerOf(pod)?.state?.terminated;
    if (status.phase !== 'failed' || status.interrupted || terminated?.reason !== 'ContainerStatusUnknown')
      return status;
    const started = this.startedAt.get(pod.metadata?.uid ?? '');
    // When it was seen not ready (the kubelet's report of the loss), else now.
    const unready = pod.status?.conditions?.find((c) => c.type === 'Ready' && c.status === 'False');
    const end = unready?.lastTransitionTime ? new Date(unready.lastTransitionTime).getTime() : now;
    return {
      ...status,
      reason: `${status.reason} (its node lost the container: a reboot, or its runtime's state gone)`,
      interrupted: true,
      ...(started === undefined ? {} : { ranForMs: Math.max(0, end - started) }),
    };
  }
}
