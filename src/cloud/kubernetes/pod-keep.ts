// Which of boa's pods a pass keeps: apart from the executor, as both its reconcile and its stops ask.
import type { V1Pod } from '@kubernetes/client-node';
import type { DesiredJob } from '../../service/ports.ts';
import type { PodIdentity } from './names.ts';

/** A pod belongs when its job wants this generation, with a replica of its rank on its node. */
export function belongs(pod: V1Pod, id: PodIdentity, job: DesiredJob | undefined): boolean {
  if (!job || job.generation !== id.generation) return false;
  return job.replicas.some((r) => r.rank === id.rank && r.node === pod.spec?.nodeName);
}

/** An ended pod within its retention (endedPodRetentionSeconds after its container's exit). */
export function keptEnded(pod: V1Pod, now: () => number, retentionSeconds: number): boolean {
  const finished = pod.status?.containerStatuses?.[0]?.state?.terminated?.finishedAt;
  if (!finished) return false;
  return now() - new Date(finished).getTime() < retentionSeconds * 1000;
}
