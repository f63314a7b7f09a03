import type { V1Pod } from '@kubernetes/client-node';

/**
 * Why a pod still waits in ContainerCreating, when its status can say: the kubelet mounts a pod's
 * volumes before it makes the pod's sandbox, so PodReadyToStartContainers=False (Kubernetes 1.29 on)
 * is volumes not mounted yet, or the sandbox's network not set up; an image pull comes after, with it
 * True. Only a hint naming the claim, never a failure: FailedMount and FailedAttachVolume are Events,
 * which boa does not read (its role grants none), and a slow attach or network passes. The start
 * deadline (startTimeoutSeconds) fails a pod that never starts, with this as its reason.
 */
export function volumeWait(pod: V1Pod): string | undefined {
  const sandbox = pod.status?.conditions?.find((c) => c.type === 'PodReadyToStartContainers');
  if (sandbox?.status !== 'False') return undefined;
  const claims = (pod.spec?.volumes ?? []).flatMap((v) =>
    v.persistentVolumeClaim ? [v.persistentVolumeClaim.claimName] : [],
  );
  const where = `kubectl -n ${pod.metadata?.namespace} describe pod ${pod.metadata?.name}`;
  if (claims.length === 0) return `pod sandbox not ready (network?): ${where} shows why`;
  return (
    `volumes or network not ready: it mounts volume claim ${claims.map((c) => `"${c}"`).join(', ')} ` +
    `(ReadWriteMany needed); ${where} shows FailedMount or FailedAttachVolume events if the volume is why`
  );
}
