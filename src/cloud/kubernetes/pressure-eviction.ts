import type { V1Pod } from '@kubernetes/client-node';

/**
 * The kubelet's eviction message names each container of the evicted pod that used more than it
 * requested (pkg/kubelet/eviction: "Container train was using 15032812Ki, request is 0, has larger
 * consumption of memory."): under memory or disk pressure it evicts the pod furthest above its request.
 */
const OWN_USE =
  /Container \S+ was using \S+, request is \S+, has larger consumption of (memory|ephemeral-storage)/;

const ADVICE: Record<string, string> = {
  memory:
    "its replica used more memory than it requested and its node ran low: set workload.memoryPerGpu to what a replica needs per GPU (then it is given that memory, and only ever killed at that limit), or lower the job's memory use",
  'ephemeral-storage':
    "its replica wrote more to its node's disk than the node could spare: write checkpoints and data to the checkpoint volume claim or S3, not the container's file system",
};

/**
 * A pod its node evicted for the pod's own memory or disk use: what to do, then the kubelet's words; undefined for any
 * other stop. Taken for an interruption, as another's eviction is, a job that outgrew its node was
 * resumed at once each time, its restarts never counted: a leak or a growing data loader ran, and paid
 * for its GPUs, for ever (found in review). As a failure it restarts until maxRestarts, as an OOM kill
 * (which a memory limit makes it) does.
 */
export function ownPressureEviction(pod: V1Pod): string | undefined {
  const marked = pod.status?.conditions?.find(
    (c) => c.type === 'DisruptionTarget' && c.status === 'True' && c.reason === 'TerminationByKubelet',
  );
  const message = (pod.status?.reason === 'Evicted' ? pod.status.message : undefined) ?? marked?.message;
  const resource = message ? OWN_USE.exec(message)?.[1] : undefined;
  if (!resource) return undefined;
  return `${ADVICE[resource]}; ${message!.trim()}`;
}
