import { ServiceError } from './errors.ts';
import type { Workload } from './ports.ts';
import type { BoaService } from './service.ts';

/**
 * A submission's checkpoint volume claim, checked by the executor before anything is stored: a claim
 * its replicas cannot mount keeps them in ContainerCreating, their GPUs paid and idle, until the start
 * deadline, attempt after attempt (docs/kubernetes.md). Skipped where registerJob refuses anyway (an
 * unknown class, no executor) and for a key whose job exists (its answer is replayed, claim or not).
 */
export async function checkCheckpointClaim(
  svc: BoaService,
  className: string,
  workload: Workload | undefined,
  idempotencyKey: string | undefined,
): Promise<void> {
  const claim = workload?.checkpoint?.volumeClaim;
  const executor = svc.deps.executor;
  if (claim === undefined || !executor?.checkVolumeClaim || !svc.state.classes.has(className)) return;
  if (idempotencyKey !== undefined && svc.deps.repo.jobByIdempotencyKey(idempotencyKey)) return;
  const problem = await executor.checkVolumeClaim(claim);
  if (!problem) return;
  const field = 'workload.checkpoint.volumeClaim';
  switch (problem.kind) {
    case 'refused':
      throw new ServiceError(422, 'workload_not_runnable', problem.message, field);
    // Still binding by itself (an Immediate class's volume being made): a moment's wait, not the
    // client's mistake, so neither a 422 (read as final) nor taken before it is Bound.
    case 'binding':
      throw new ServiceError(503, 'claim_not_bound', `${problem.message}; nothing was stored`, field);
    // boa's role may not read the claim: a setup to fix (the message says how), which no retry waits
    // out. 503, as a log boa may not read (logs_unavailable), under its own code.
    case 'forbidden':
      throw new ServiceError(503, 'executor_forbidden', `${problem.message}; nothing was stored`, field);
    // Out of reach, the claim is refused for now (503), not taken on trust with a warning: a job taken
    // on a claim that cannot mount would hold paid GPUs for startTimeoutSeconds per attempt, and jobs
    // with a workload are already refused with 503 while the executor has not answered
    // (executor_not_ready).
    case 'unavailable':
      throw new ServiceError(
        503,
        'executor_unavailable',
        `${problem.message}; nothing was stored: try again in a few seconds`,
        field,
      );
  }
}
