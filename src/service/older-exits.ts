/**
 * Whether an older generation's rank 0 that exited 0 on its own finished its job. It did if it ended
 * just as the job was rescaled or restarted, or as a tick took all its GPUs (it waits then, and would
 * run again; the exit is reported once), before boa moved the job on: boa's clients exit 0 when they
 * see the new generation, before the executor stops them (found in a trial: under load 14 of 30 jobs
 * rescaled were marked done with their work undone). An exit that may be either runs once more.
 */
import type { ServiceJob } from './jobs.ts';
import type { ReplicaStatus } from './ports.ts';

/** The replica of an older generation whose exit finished `job`, if one did. */
export function olderGenerationFinished(
  replicas: readonly ReplicaStatus[],
  job: ServiceJob,
): ReplicaStatus | undefined {
  return replicas.find(
    (r) =>
      r.generation < job.generation &&
      r.rank === 0 &&
      r.phase === 'succeeded' &&
      !r.interrupted &&
      endedBeforeGeneration(r, job),
  );
}

/**
 * Margin for the clock of the node that saw the exit against boa's (a Kubernetes container's finish
 * time is its node's): an exit this close to the new generation may have been a client leaving for it.
 */
const GENERATION_CLOCK_MARGIN_MS = 2000;

/**
 * The replica ended before boa moved its job on from the replica's generation, so it cannot have left
 * for a newer one. Judged only for the generation just before the current one, whose end is
 * `generationSince`: after two moves the time the replica's generation ended is not kept, and an exit
 * before the second move may have been a client leaving for the first (found in review), so it counts
 * as may-be-either: the job runs once more.
 */
function endedBeforeGeneration(replica: ReplicaStatus, job: ServiceJob): boolean {
  if (replica.endedAt === undefined || job.generationSince === null) return false;
  if (replica.generation !== job.generation - 1) return false;
  return replica.endedAt < job.generationSince - GENERATION_CLOCK_MARGIN_MS;
}
