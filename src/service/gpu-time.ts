/**
 * Each job's GPU-time, booked as the ledger books allocation: the GPUs of its allocation less those the
 * idle fill lent (they sit on nodes paid anyway). Kept as closed GPU-milliseconds up to `gpuMsSince` and
 * the allocation held since, so a job's row alone gives its total at any time, through restarts and
 * boa's own downtime (its replicas kept their GPUs then, as the ledger's downtime sample books them).
 * Whatever changes a job's allocation or lent GPUs closes the interval first, with the allocation it
 * had (TickUndo.note in a tick, finishJob at an end).
 */
import type { ServiceJob } from './jobs.ts';

type GpuTime = Pick<ServiceJob, 'allocation' | 'idleFillGpus' | 'gpuMs' | 'gpuMsSince'>;

/** GPUs the job books now: what the budget counts of it. */
export function bookedGpus(job: Pick<ServiceJob, 'allocation' | 'idleFillGpus'>): number {
  return Math.max(0, job.allocation.length - job.idleFillGpus);
}

/** GPUs booked now by job class, classes with none left out: the ledger's allocation by class. */
export function bookedByClass(
  jobs: Iterable<Pick<ServiceJob, 'className' | 'allocation' | 'idleFillGpus'>>,
): Record<string, number> {
  const byClass: Record<string, number> = {};
  for (const job of jobs) {
    const gpus = bookedGpus(job);
    if (gpus > 0) byClass[job.className] = (byClass[job.className] ?? 0) + gpus;
  }
  return byClass;
}

/** `byClass` less what `job` books (a new record: the caller's undo keeps the old one). */
export function withoutJob(
  byClass: Readonly<Record<string, number>>,
  job: Pick<ServiceJob, 'className' | 'allocation' | 'idleFillGpus'>,
): Record<string, number> {
  const left = { ...byClass };
  const gpus = (left[job.className] ?? 0) - bookedGpus(job);
  if (gpus > 0) left[job.className] = gpus;
  else delete left[job.className];
  return left;
}

/** The job's booked GPU-milliseconds up to `now`; null for a job from before they were kept. */
export function gpuMsAt(job: GpuTime, now: number): number | null {
  if (job.gpuMs === null || job.gpuMsSince === null) return null;
  return job.gpuMs + bookedGpus(job) * Math.max(0, now - job.gpuMsSince);
}

/** Closes the interval at `now` with the allocation held until then: call before changing it. */
export function closeGpuTime(job: GpuTime, now: number): void {
  const total = gpuMsAt(job, now);
  if (total === null) return;
  // Never backwards: a report stamped before the interval began (an end the executor dates earlier
  // than the last tick) closes nothing, and the next interval starts where this one was.
  if (now < (job.gpuMsSince as number)) return;
  job.gpuMs = total;
  job.gpuMsSince = now;
}
