import type { ServiceJob } from './jobs.ts';
import type { ReplicaStatus } from './ports.ts';
import type { BoaService } from './service.ts';

/**
 * What a replica's exit means for its job (execution.ts judges which replica counts): a failure restarts
 * the generation after a backoff, or fails the job after maxRestarts; one stopped from outside resumes at
 * once, not counted, if it ran long enough to have been worth running.
 */

/** Longest wait before a failed job's replicas start again (the backoff doubles up to this). */
const MAX_BACKOFF_MS = 10 * 60_000;

/**
 * The rank whose failure a stored reason names: every failure reason starts with it (failGeneration
 * writes "rank N ..."), so the API's failedRank is read back from the reason rather than stored apart,
 * and is known for jobs stored before it was shown too. Null for no reason, or one not of that form.
 */
export function failedRankOf(reason: string | null): number | null {
  const match = reason === null ? null : /^rank (\d+) /.exec(reason);
  return match ? Number(match[1]) : null;
}

/**
 * When the last of a generation's replicas ended, if every one has and says when (they ended while boa
 * was down); undefined while one still runs, or an end is unknown: the job's GPUs are held until now.
 */
export function lastEnd(replicas: readonly ReplicaStatus[]): number | undefined {
  let last: number | undefined;
  for (const r of replicas) {
    if ((r.phase !== 'failed' && r.phase !== 'succeeded') || r.endedAt === undefined) return undefined;
    last = Math.max(last ?? r.endedAt, r.endedAt);
  }
  return last;
}

/**
 * A failed replica: the generation restarts after a backoff, or the job fails for good: after
 * maxRestarts, or at once when a restart would fail the same way (ReplicaStatus.notRestartable). Failed
 * for good, its GPUs are booked until `endedAt` (lastEnd), if known, else until now.
 */
export function failGeneration(
  service: BoaService,
  job: ServiceJob,
  replica: ReplicaStatus,
  endedAt?: number,
): void {
  const { config, logger, clock } = service.deps;
  const exitCode = replica.exitCode ?? null;
  // Its form is failedRankOf's.
  const reason = `rank ${replica.rank} ${replica.reason ?? 'failed'}`;
  if (replica.notRestartable !== undefined) {
    service.finishJob(
      job.id,
      'failed',
      undefined,
      { exitCode, reason: `${reason}; ${replica.notRestartable}` },
      endedAt,
    );
    return;
  }
  if (job.restarts >= config.maxRestarts) {
    service.finishJob(
      job.id,
      'failed',
      undefined,
      { exitCode, reason: `${reason} (after ${job.restarts} restarts)` },
      endedAt,
    );
    return;
  }
  const delay = Math.min(config.restartBackoffSeconds * 1000 * 2 ** job.restarts, MAX_BACKOFF_MS);
  saveWith(service, job, {
    restarts: job.restarts + 1,
    exitCode,
    failureReason: reason,
    // A new generation on the same GPUs: the failed one's replicas are removed, a fresh set starts.
    generation: job.generation + 1,
    generationSince: clock.now(),
    restartNotBefore: clock.now() + delay,
  });
  service.state.counters.jobRestarts += 1;
  logger.warn(
    { event: 'job_restart', jobId: job.id, restarts: job.restarts, exitCode, reason, backoffMs: delay },
    'job failed; restarting',
  );
}

/** Resumed for free if it ran long enough to have been worth running; a failure otherwise. */
export function interruptedGeneration(service: BoaService, job: ServiceJob, replica: ReplicaStatus): void {
  const minRunMs = service.deps.config.interruptedMinRunSeconds * 1000;
  if (replica.ranForMs !== undefined && replica.ranForMs >= minRunMs) {
    resume(service, job, replica);
    return;
  }
  const ran =
    replica.ranForMs === undefined ? 'for an unknown time' : `${Math.round(replica.ranForMs / 1000)} s`;
  failGeneration(service, job, {
    ...replica,
    reason: `${replica.reason ?? 'stopped from outside'}, after it ran ${ran} (under interruptedMinRunSeconds: counted as a failure)`,
  });
}

/**
 * A replica stopped by someone else (a machine shutting down, a pod evicted): the generation starts
 * again from its checkpoint at once, and it is not counted against maxRestarts (as a Kubernetes Job's
 * podFailurePolicy ignores the DisruptionTarget condition): the job did nothing wrong.
 */
function resume(service: BoaService, job: ServiceJob, replica: ReplicaStatus): void {
  const { logger, clock } = service.deps;
  saveWith(service, job, { generation: job.generation + 1, generationSince: clock.now() });
  logger.warn(
    {
      event: 'job_interrupted',
      jobId: job.id,
      rank: replica.rank,
      exitCode: replica.exitCode ?? null,
      reason: replica.reason,
    },
    'a replica was stopped from outside; the job resumes from its checkpoint',
  );
}

/**
 * Saves `job` with `changes`, and changes the job in memory only once the store has them: a failed
 * write leaves both as they were (the tick saves a job only when its allocation changes, so a change
 * held in memory alone would never reach the store, and a restart would lose it).
 */
function saveWith(service: BoaService, job: ServiceJob, changes: Partial<ServiceJob>): void {
  const { repo } = service.deps;
  repo.transaction(() => repo.saveJobState({ ...job, ...changes }));
  Object.assign(job, changes);
}
