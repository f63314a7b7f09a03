import type { ServiceJob } from './jobs.ts';

/** The fields of a job a tick's decision changes (Scheduler.decide and followPlan). */
type TickFields = Pick<
  ServiceJob,
  | 'state'
  | 'startedAt'
  | 'planId'
  | 'widths'
  | 'epochStartedAt'
  | 'epochGeneration'
  | 'epochTimedFromReport'
  | 'width'
  | 'allocation'
  | 'generation'
  | 'generationSince'
  | 'idleFillGpus'
>;

/**
 * The jobs a tick changed, as they were before it. When the tick's transaction rolls back they are put
 * back, so memory agrees with the store and the next tick decides them again. Arrays are replaced,
 * never mutated, so keeping the references is enough.
 */
export class TickUndo {
  private readonly before = new Map<ServiceJob, TickFields>();

  /** Call before changing `job`: the first call in a tick keeps the job as it was before it. */
  note(job: ServiceJob): void {
    if (this.before.has(job)) return;
    this.before.set(job, {
      state: job.state,
      startedAt: job.startedAt,
      planId: job.planId,
      widths: job.widths,
      epochStartedAt: job.epochStartedAt,
      epochGeneration: job.epochGeneration,
      epochTimedFromReport: job.epochTimedFromReport,
      width: job.width,
      allocation: job.allocation,
      generation: job.generation,
      generationSince: job.generationSince,
      idleFillGpus: job.idleFillGpus,
    });
  }

  restore(): void {
    for (const [job, fields] of this.before) Object.assign(job, fields);
  }
}
