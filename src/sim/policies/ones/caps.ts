/**
 * ONES's elasticity rules, in GPUs, as its artifact (kurisusnowdeng/ones_sc21 at 8535358) applies them.
 * Every job has a limit (ONES's batch-size limit, one GPU per base batch): a new job starts at 1; a job
 * that has run at its limit for a step doubles it, never past 4 times its request (`scale_up`: ONES
 * doubles the batch size after a few epochs); the widest job, when it holds half the cluster or more,
 * has run longer than the median job and another job waits, is scaled down by its run time (ONES's
 * `scale_down`); a preempted job resumes at most as wide as it was, and its limit halves every tick it
 * still waits (ONES's resume). Per tick a running job's width may at most double or halve, or it may
 * be stopped; a job that changed less than a step ago, or is restarting, keeps its allocation (ONES
 * waits an epoch after a change before touching a job again).
 */
import type { JobView } from '../../policy.ts';

/** ONES waits 2 epochs between doublings and an epoch after a change; here one step of 3 ticks. */
export const STEP_SECONDS = 180;
/**
 * The artifact's `scale_up` (monitor.py): `min(max_size, num_gpus * 4)`, so no job grows past 4 times
 * the GPUs it asked for. (Its config's `max_size_limit` = 8 is never read.)
 */
export const REQUEST_MULTIPLE = 4;
/** The artifact's `scale_down_factor` in force (config.py sets 0.5, then 1.0 further down). */
export const SCALE_DOWN_FACTOR = 1;

/** The widest a job may grow: 4 times its request (at least 1 GPU asked for). */
export const maxGpusOf = (job: JobView): number => REQUEST_MULTIPLE * Math.max(1, job.requestedGpus);

/**
 * The artifact's `scale_down`: 2 x width / (factor x run / median run + 1), at least 1, rounded up to
 * an even count; applied only when the job has run longer than the median.
 */
export function scaledDown(width: number, runSeconds: number, medianRunSeconds: number): number {
  const size = Math.max(
    1,
    Math.floor((2 * width) / ((SCALE_DOWN_FACTOR * runSeconds) / medianRunSeconds + 1)),
  );
  return Math.ceil(size / 2) * 2;
}

/** What the search may give a job this tick. */
export interface WidthBounds {
  /** Smallest non-zero width. */
  readonly lo: number;
  /** Largest width. */
  readonly hi: number;
  /** May be left with no GPUs (waiting, or stopped by the search). */
  readonly canStop: boolean;
  /** Must keep exactly its current allocation. */
  readonly pinned: boolean;
}

interface JobState {
  /** Seconds it has run (with GPUs), as last seen: its run time once it finishes. */
  runSeconds: number;
  limit: number;
  /** When the limit last changed (or the job arrived). */
  limitAt: number;
  /** When the allocation last changed; null while it never ran. */
  movedAt: number | null;
  /** Its width at the last update. */
  lastWidth: number;
}

export class WidthCaps {
  readonly #jobs = new Map<number, JobState>();
  /** Run times of the jobs that have finished (or left), for the median the scale-down reads. */
  readonly #finishedRunSeconds: number[] = [];

  constructor(readonly stepSeconds = STEP_SECONDS) {}

  /** The job's current limit (1 for a job not seen yet). */
  limit(jobId: number): number {
    return this.#jobs.get(jobId)?.limit ?? 1;
  }

  /**
   * Starts a tick: forgets finished jobs, doubles the limits of jobs that ran at their limit for a step
   * (up to `ceiling(job)`), and halves the limit of the widest settled job if it holds half the cluster.
   */
  update(
    jobs: readonly JobView[],
    now: number,
    clusterGpus: number,
    ceiling: (job: JobView) => number,
  ): void {
    const active = new Set(jobs.map((j) => j.id));
    for (const [id, state] of this.#jobs) {
      if (active.has(id)) continue;
      // As the artifact's median: jobs that ran (one that never started has no run time).
      if (state.runSeconds > 0) this.#finishedRunSeconds.push(state.runSeconds);
      this.#jobs.delete(id);
    }
    let widest: { job: JobView; state: JobState } | null = null;
    for (const job of jobs) {
      const state = this.#state(job);
      const width = job.allocation.length;
      const lastWidth = state.lastWidth;
      state.lastWidth = width;
      state.runSeconds = job.runSeconds;
      if (width === 0 && state.movedAt !== null) {
        // ONES's resume rule: a preempted job may ask for no more than it had, and each round it is
        // still waiting (its request rejected) its limit halves.
        if (lastWidth > 0) state.limit = Math.max(1, Math.min(state.limit, lastWidth));
        else state.limit = Math.max(1, Math.floor(state.limit / 2));
      }
      if (width === 0 || !this.#settled(state, job, now)) continue;
      if (width >= state.limit && now - state.limitAt >= this.stepSeconds) {
        const doubled = Math.min(2 * state.limit, Math.max(1, ceiling(job)), clusterGpus, maxGpusOf(job));
        if (doubled > state.limit) {
          state.limit = doubled;
          state.limitAt = now;
        }
      }
      if (widest === null || width > widest.job.allocation.length) widest = { job, state };
    }
    // Only when a job waits: scaling down makes room for others (on an idle cluster it would only thrash).
    const someoneWaits = jobs.some((j) => j.allocation.length === 0);
    if (widest === null || !someoneWaits || clusterGpus <= 1) return;
    const width = widest.job.allocation.length;
    if (width < clusterGpus / 2) return;
    // The artifact's median run time: of every job that has started, running or finished.
    const median = medianOf([
      ...jobs.filter((j) => j.runSeconds > 0).map((j) => j.runSeconds),
      ...this.#finishedRunSeconds,
    ]);
    if (!(median > 0) || widest.job.runSeconds <= median) return;
    // At most halved at once, as every change here: the rest follows a step later if it still applies.
    const limit = Math.max(Math.ceil(width / 2), scaledDown(width, widest.job.runSeconds, median));
    if (limit < width) {
      widest.state.limit = limit;
      widest.state.limitAt = now;
    }
  }

  /** What the search may do with the job this tick. */
  bounds(job: JobView, now: number, clusterGpus: number): WidthBounds {
    const state = this.#state(job);
    const width = job.allocation.length;
    const top = Math.max(1, Math.min(clusterGpus, maxGpusOf(job)));
    if (width === 0) return { lo: 1, hi: Math.min(state.limit, top), canStop: true, pinned: false };
    if (!this.#settled(state, job, now)) return { lo: width, hi: width, canStop: false, pinned: true };
    const hi = Math.max(1, Math.min(2 * width, Math.max(state.limit, 1), top));
    const lo = Math.min(Math.ceil(width / 2), hi);
    return { lo, hi, canStop: true, pinned: false };
  }

  /** Records that the job's allocation changes now (started, resized, moved or stopped). */
  moved(jobId: number, now: number): void {
    const state = this.#jobs.get(jobId);
    if (state !== undefined) state.movedAt = now;
  }

  #settled(state: JobState, job: JobView, now: number): boolean {
    if (job.restartingUntil !== null && job.restartingUntil > now) return false;
    return state.movedAt === null || now - state.movedAt >= this.stepSeconds;
  }

  #state(job: JobView): JobState {
    let state = this.#jobs.get(job.id);
    if (state === undefined) {
      state = {
        limit: 1,
        limitAt: job.arrival,
        movedAt: null,
        lastWidth: job.allocation.length,
        runSeconds: job.runSeconds,
      };
      this.#jobs.set(job.id, state);
    }
    return state;
  }
}

function medianOf(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}
