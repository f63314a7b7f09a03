/**
 * Lyra's first stage: base demands, shortest job first. A job's base is what it must have to run at all;
 * jobs are admitted by estimated remaining time at that base, and a job whose base does not fit is
 * skipped so shorter-base jobs behind it may start (backfill). By default a running job keeps its base
 * (it is never stopped for a shorter arrival: only its extra workers are reclaimed); `preemptive` makes
 * it compete like a waiting job (shortest remaining time first).
 */

export interface BaseDemand {
  readonly id: number;
  /** GPUs the job needs to run at all. */
  readonly base: number;
  /** Estimated seconds left at the base width: the SJF key. */
  readonly remaining: number;
  readonly arrival: number;
  /** True when the job holds GPUs now. */
  readonly running: boolean;
}

export interface Admission {
  /** Admitted jobs' ids, in the order they were admitted. */
  readonly admitted: readonly number[];
  /** GPUs left after every admitted job's base. */
  readonly free: number;
}

/** SJF order: least remaining first; ties by arrival, then id (deterministic). */
export function sjfOrder(a: BaseDemand, b: BaseDemand): number {
  return a.remaining - b.remaining || a.arrival - b.arrival || a.id - b.id;
}

export function admitBases(jobs: readonly BaseDemand[], gpus: number, preemptive = false): Admission {
  const order = [...jobs].sort(
    (a, b) => (preemptive ? 0 : Number(b.running) - Number(a.running)) || sjfOrder(a, b),
  );
  const admitted: number[] = [];
  let free = gpus;
  for (const job of order) {
    if (job.base > free) continue;
    admitted.push(job.id);
    free -= job.base;
  }
  return { admitted, free };
}
