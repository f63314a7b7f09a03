import { closeGpuTime } from './gpu-time.ts';
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
  | 'gpuMs'
  | 'gpuMsSince'
>;

/**
 * The jobs a tick changed, as they were before it. When the tick's transaction rolls back they are put
 * back, so memory agrees with the store and the next tick decides them again. Arrays are replaced,
 * never mutated, so keeping the references is enough.
 */
export class TickUndo {
  private readonly before = new Map<ServiceJob, TickFields>();

  /** `now`: the tick's time, where a job noted closes its GPU-time (gpu-time.ts). */
  constructor(private readonly now: number) {}

  /**
   * Call before changing `job`: the first call in a tick keeps the job as it was before it, and books
   * its GPU-time up to the tick at the allocation it had.
   */
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
      gpuMs: job.gpuMs,
      gpuMsSince: job.gpuMsSince,
    });
    closeGpuTime(job, this.now);
  }

  restore(): void {
    for (const [job, fields] of this.before) Object.assign(job, fields);
  }

  /**
   * One generation a tick at most. A tick decides again after a scale-in, and the idle fill can lend a
   * job GPUs in the first decision and take them back in the next: a job that ends the tick where it
   * began gets its generation back, so its replicas are not restarted for an allocation they already
   * run; one moved twice (X -> Y -> Z) is one generation on, as the exits of the generation before it
   * are what older-exits.ts reads.
   */
  settleGenerations(jobs: Iterable<ServiceJob>): void {
    for (const job of jobs) {
      const before = this.before.get(job);
      if (before === undefined || before.generation === job.generation) continue;
      if (!sameAllocation(before.allocation, job.allocation)) {
        job.generation = before.generation + 1;
        continue;
      }
      // What a placement sets (decide): a waiting job placed and then not is not started either.
      job.generation = before.generation;
      job.generationSince = before.generationSince;
      job.state = before.state;
      job.width = before.width;
      job.startedAt = before.startedAt;
      job.epochStartedAt = before.epochStartedAt;
      job.epochGeneration = before.epochGeneration;
      job.epochTimedFromReport = before.epochTimedFromReport;
    }
  }
}

function sameAllocation(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
