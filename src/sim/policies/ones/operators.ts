/**
 * The candidate operators of ONES's evolutionary search, on widths (one per job, in problem order).
 * `repair` makes any vector feasible (within each job's bounds, within the cluster), `pad` fills the
 * cluster as ONES's `_pad` does (new jobs get one GPU first, then jobs in SRUF order grow to their
 * limit), `crossover` swaps each job's width between two parents with probability xi, and `mutate`
 * stops a job with probability theta (ONES's mutation) or, also with probability theta, doubles or
 * halves it (added: ONES's widths come only from its limits; this lets the search try other widths).
 */
import type { SearchJob, SearchProblem } from './sruf.ts';

/** A uniform source in (0, 1]. */
export type Random = () => number;

export function clampToBounds(job: SearchJob, width: number): number {
  const { lo, hi, canStop, pinned } = job.bounds;
  if (pinned) return job.current;
  if (width <= 0) return canStop ? 0 : lo;
  return Math.min(hi, Math.max(lo, width));
}

/** True when every width is allowed for its job and they fit the cluster together. */
export function isFeasible(problem: SearchProblem, widths: Int32Array): boolean {
  let used = 0;
  for (let i = 0; i < problem.jobs.length; i++) {
    const width = widths[i] as number;
    if (clampToBounds(problem.jobs[i] as SearchJob, width) !== width) return false;
    used += width;
  }
  return used <= problem.gpus;
}

/** Clamps every width to its bounds, then trims jobs last in SRUF order until the cluster fits. */
export function repair(problem: SearchProblem, widths: Int32Array, sruf: readonly number[]): void {
  let used = 0;
  problem.jobs.forEach((job, i) => {
    widths[i] = clampToBounds(job, widths[i] as number);
    used += widths[i] as number;
  });
  for (let r = sruf.length - 1; r >= 0 && used > problem.gpus; r--) {
    const i = sruf[r] as number;
    const job = problem.jobs[i] as SearchJob;
    const width = widths[i] as number;
    if (job.bounds.pinned || width === 0) continue;
    // Shrink toward the smallest allowed width first; stop the job only if that is not enough.
    const shrunk = Math.max(job.bounds.lo, width - (used - problem.gpus));
    const next = used - width + shrunk > problem.gpus && job.bounds.canStop ? 0 : shrunk;
    used += next - width;
    widths[i] = next;
  }
}

/**
 * Fills free GPUs: one each to jobs that never ran (arrival order), then SRUF order up to each limit.
 * When no GPU is free for a new job, one is taken from the job that has run longest and may still shrink
 * (ONES's refresh, section 3.2.2: "take GPUs from the jobs with the largest T_processed until N new jobs
 * are fully allocated", against starvation of new jobs); no job is stopped for it.
 */
export function pad(
  problem: SearchProblem,
  widths: Int32Array,
  sruf: readonly number[],
  fresh: readonly number[],
): void {
  let free = problem.gpus;
  for (let i = 0; i < widths.length; i++) free -= widths[i] as number;
  for (const i of fresh) {
    const job = problem.jobs[i] as SearchJob;
    if (widths[i] !== 0 || job.bounds.lo > 1) continue;
    if (free <= 0) {
      const donor = longestShrinkable(problem, widths);
      if (donor < 0) break;
      widths[donor] = (widths[donor] as number) - 1;
      free++;
    }
    widths[i] = 1;
    free--;
  }
  for (const i of sruf) {
    if (free <= 0) break;
    const job = problem.jobs[i] as SearchJob;
    const width = widths[i] as number;
    if (job.bounds.pinned || width >= job.bounds.hi) continue;
    const next = Math.min(job.bounds.hi, width + free);
    if (next < job.bounds.lo) continue;
    widths[i] = next;
    free -= next - width;
  }
}

/** The job with the most executed time that can give up a GPU within its bounds; -1 when none. */
function longestShrinkable(problem: SearchProblem, widths: Int32Array): number {
  let best = -1;
  let bestProcessed = -1;
  for (let i = 0; i < widths.length; i++) {
    const job = problem.jobs[i] as SearchJob;
    const width = widths[i] as number;
    if (job.bounds.pinned || width - 1 < Math.max(1, job.bounds.lo)) continue;
    const processed = job.processed ?? 0;
    if (processed > bestProcessed) {
      best = i;
      bestProcessed = processed;
    }
  }
  return best;
}

export function crossover(
  a: Int32Array,
  b: Int32Array,
  xi: number,
  random: Random,
): [Int32Array, Int32Array] {
  const first = new Int32Array(a.length);
  const second = new Int32Array(a.length);
  for (let i = 0; i < a.length; i++) {
    const swap = random() <= xi;
    first[i] = (swap ? b[i] : a[i]) as number;
    second[i] = (swap ? a[i] : b[i]) as number;
  }
  return [first, second];
}

export function mutate(
  problem: SearchProblem,
  parent: Int32Array,
  theta: number,
  random: Random,
): Int32Array {
  const child = Int32Array.from(parent);
  problem.jobs.forEach((job, i) => {
    const width = child[i] as number;
    if (job.bounds.pinned || width === 0) return;
    if (job.bounds.canStop && random() <= theta) child[i] = 0;
    else if (random() <= theta) child[i] = random() <= 0.5 ? Math.ceil(width / 2) : 2 * width;
  });
  return child;
}
