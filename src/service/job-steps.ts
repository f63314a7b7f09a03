import type { BoaService } from './service.ts';

/**
 * One job's step of an executor pass: one that fails (a store error) is logged, and the other jobs'
 * steps are still taken (a job finished as its rank 0 ended is not lost to another job's failure).
 */
export function guardedStep(service: BoaService, jobId: number, step: string, take: () => void): void {
  try {
    take();
  } catch (error) {
    service.deps.logger.error(
      { event: 'execution_step_failed', jobId, step, error: (error as Error).message },
      "a job's step failed; the other jobs' were taken",
    );
  }
}

/** Self-launched jobs holding GPUs that have not polled or reported for leaseSeconds are lost. */
export function expireLeases(service: BoaService, now: number): void {
  const leaseMs = service.deps.config.leaseSeconds * 1000;
  const lost = service.leases.expired(service.state.jobs.values(), now, leaseMs);
  // Guarded as the executor's steps: a store error here came after the tick's commit, and thrown it
  // skipped the tick's executor reconcile, re-plan and metrics (the heartbeat) and failed the tick.
  for (const { job, silentSeconds: silent } of lost) {
    guardedStep(service, job.id, 'lease', () =>
      service.finishJob(job.id, 'lost', undefined, {
        exitCode: null,
        reason: `no allocation poll or progress report for ${silent} s (lease ${leaseMs / 1000} s)`,
      }),
    );
  }
}
