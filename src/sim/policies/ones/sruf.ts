/**
 * ONES's objective, SRUF (smallest remaining utilisation first). A job's remaining utilisation at w GPUs
 * is the GPU-time it still needs there: w x its remaining run time (plus the restart when its width
 * changes: the GPUs are held through it). A candidate allocation scores the sum over the jobs it runs;
 * lower is better, so GPUs go to jobs that will give them back soonest and to widths that waste least.
 * Candidates are first compared by GPUs used, more first: ONES pads every candidate to a full cluster,
 * and without that rule an empty allocation would score best.
 */
import type { WidthBounds } from './caps.ts';

export interface SearchJob {
  readonly id: number;
  readonly bounds: WidthBounds;
  /** Width now (0 while waiting). */
  readonly current: number;
  /** Never ran yet: ONES gives such a job one GPU before growing others. */
  readonly fresh: boolean;
  /**
   * Executed seconds so far (ONES's T_processed; 0 when not given): new jobs short of free GPUs take
   * them from the jobs that have run longest.
   */
  readonly processed?: number;
  /** remaining[w]: estimated run time left at w GPUs, w = 1..bounds.hi (index 0 unused). */
  readonly remaining: Float64Array;
}

export interface SearchProblem {
  readonly jobs: readonly SearchJob[];
  /** GPUs on ready nodes. */
  readonly gpus: number;
  readonly restartSeconds: number;
}

export interface Fitness {
  readonly used: number;
  readonly score: number;
}

/** GPU-seconds the job still needs at width w from now. */
export function remainingUtilisation(job: SearchJob, width: number, restartSeconds: number): number {
  if (width === 0) return 0;
  const restart = width === job.current ? 0 : restartSeconds;
  return width * ((job.remaining[width] as number) + restart);
}

export function evaluate(problem: SearchProblem, widths: Int32Array): Fitness {
  let used = 0;
  let score = 0;
  problem.jobs.forEach((job, i) => {
    const width = widths[i] as number;
    used += width;
    score += remainingUtilisation(job, width, problem.restartSeconds);
  });
  return { used, score };
}

/** Negative when `a` is the better candidate. */
export function compareFitness(a: Fitness, b: Fitness): number {
  return b.used - a.used || a.score - b.score;
}

/** Job indices by SRUF priority: least remaining 1-GPU time first (ONES's queue order), ties by id. */
export function srufOrder(problem: SearchProblem): number[] {
  return problem.jobs
    .map((_, i) => i)
    .sort((a, b) => {
      const ja = problem.jobs[a] as SearchJob;
      const jb = problem.jobs[b] as SearchJob;
      return (ja.remaining[1] as number) - (jb.remaining[1] as number) || ja.id - jb.id;
    });
}
