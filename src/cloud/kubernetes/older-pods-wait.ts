import type { V1Pod } from '@kubernetes/client-node';
import type { DesiredJob, ReplicaStatus } from '../../service/ports.ts';
import type { PodIdentity } from './names.ts';

/** Blocking pods named in a reason; the rest are counted. */
const NAMED = 3;

/** One pod the job's new replicas wait for, as a user can look it up. */
function describe(pod: V1Pod, now: number): string {
  const name = pod.metadata?.name ?? '(unnamed)';
  const where = `${name} on node ${pod.spec?.nodeName ?? '(none)'}`;
  const graceEnds = pod.metadata?.deletionTimestamp;
  if (!graceEnds) return where;
  const pastMs = now - new Date(graceEnds).getTime();
  if (pastMs < 1000) return `${where} (stopping)`;
  // Past its grace on a node whose kubelet does not confirm the stop: only `describe` tells why
  // (a volume that does not unmount, a process the kubelet cannot kill).
  return (
    `${where} (${Math.round(pastMs / 1000)} s past its grace period; ` +
    `kubectl -n ${pod.metadata?.namespace} describe pod ${name} shows why)`
  );
}

/**
 * The replicas a job's pods are not made for while an older pod of the job (another generation, or on
 * another node) has not gone: reported starting, naming what they wait for. Without it a generation
 * held back by a pod stuck Terminating had no replica at all, and its start deadline blamed "no
 * replica was made (the executor log says why)", where nothing said why (found in review).
 */
export function waitingForOlderPods(
  job: DesiredJob,
  owned: readonly { pod: V1Pod; id: PodIdentity }[],
  blocking: readonly V1Pod[],
  now: number,
): ReplicaStatus[] {
  const named = blocking.slice(0, NAMED).map((pod) => describe(pod, now));
  const more = blocking.length > NAMED ? ` and ${blocking.length - NAMED} more` : '';
  const reason = `waiting for the job's older pods to go before its pods are made: ${named.join(', ')}${more}`;
  return job.replicas
    .filter((r) => !owned.some(({ id }) => id.generation === job.generation && id.rank === r.rank))
    .map(({ jobId, generation, rank, node }) => ({
      jobId,
      generation,
      rank,
      node,
      phase: 'starting',
      reason,
    }));
}
