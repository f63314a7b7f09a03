import type { V1Pod } from '@kubernetes/client-node';

/**
 * Why a pod still waits in ContainerCreating, when its status can say: the kubelet mounts a pod's
 * volumes before it makes the pod's sandbox, so PodReadyToStartContainers=False (Kubernetes 1.29 on)
 * is volumes not mounted yet, or the sandbox's network not set up; an image pull comes after, with it
 * True. Only a hint naming the claim, never a failure by itself: FailedMount and FailedAttachVolume are
 * Events, which boa does not read (its role grants none), and a slow attach or network passes. The
 * claim is read again meanwhile (claim-recheck.ts), which fails the pod if it is gone; otherwise the
 * start deadline (startTimeoutSeconds) fails a pod that never starts, with this as its reason.
 */
export function volumeWait(pod: V1Pod): string | undefined {
  if (!sandboxWaits(pod)) return undefined;
  const claims = claimsOf(pod);
  const where = `kubectl -n ${pod.metadata?.namespace} describe pod ${pod.metadata?.name}`;
  if (claims.length === 0) return `pod sandbox not ready (network?): ${where} shows why`;
  return (
    `volumes or network not ready: it mounts volume claim ${claims.map((c) => `"${c}"`).join(', ')} ` +
    `(ReadWriteMany needed); ${where} shows FailedMount or FailedAttachVolume events if the volume is why`
  );
}

/** The claims a pod mounts while it waits in ContainerCreating for its volumes (or network). */
export function waitingOnClaims(pod: V1Pod): string[] {
  const waiting = pod.status?.containerStatuses?.[0]?.state?.waiting?.reason;
  if (waiting !== 'ContainerCreating' || pod.metadata?.deletionTimestamp || !sandboxWaits(pod)) return [];
  return claimsOf(pod);
}

function sandboxWaits(pod: V1Pod): boolean {
  return pod.status?.conditions?.find((c) => c.type === 'PodReadyToStartContainers')?.status === 'False';
}

function claimsOf(pod: V1Pod): string[] {
  return (pod.spec?.volumes ?? []).flatMap((v) =>
    v.persistentVolumeClaim ? [v.persistentVolumeClaim.claimName] : [],
  );
}
