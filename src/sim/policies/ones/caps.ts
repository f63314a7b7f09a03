/**
 * ONES's elasticity rules, in GPUs. Every job has a limit (ONES's batch-size limit, one GPU per
 * doubling of the batch): a new job starts at 1; a job that has run at its limit for a step doubles it
 * (ONES doubles the batch size after a few epochs); the widest job, when it holds half the cluster or
 * more while another job waits, has its limit halved (ONES's scale-down); a preempted job resumes at
 * most as wide as it was, and its limit halves every tick it still waits (ONES's resume). Per tick a running job's width may at most double or
 * halve, or it may be stopped; a job that changed less than a step ago, or is restarting, keeps its
 * allocation (ONES waits an epoch after a change before touching a job again).
 */
import type { JobView } from '../../policy.ts';

/** ONES waits 3 epochs between doublings and an epoch after a change; here one step of 3 ticks. */
export const STEP_SECONDS = 180;
/** The ONES artifact's `max_size_limit`: no job grows past 8 GPUs (its sizes are GPU counts). */
export const MAX_GPUS = 8;

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
    for (const id of this.#jobs.keys()) if (!active.has(id)) this.#jobs.delete(id);
    let widest: { job: JobView; state: JobState } | null = null;
    for (const job of jobs) {
      const state = this.#state(job);
      const width = job.allocation.length;
      const lastWidth = state.lastWidth;
      state.lastWidth = width;
      if (width === 0 && state.movedAt !== null) {
        // ONES's resume rule: a preempted job may ask for no more than it had, and each round it is
        // still waiting (its request rejected) its limit halves.
        if (lastWidth > 0) state.limit = Math.max(1, Math.min(state.limit, lastWidth));
        else state.limit = Math.max(1, Math.floor(state.limit / 2));
      }
      if (width === 0 || !this.#settled(state, job, now)) continue;
      if (width >= state.limit && now - state.limitAt >= this.stepSeconds) {
        const doubled = Math.min(2 * state.limit, Math.max(1, ceiling(job)), clusterGpus, MAX_GPUS);
        if (doubled > state.limit) {
          state.limit = doubled;
          state.limitAt = now;
        }
      }
      if (widest === null || width > widest.job.allocation.length) widest = { job, state };
    }
    // Only when a job waits: halving makes room for others (on an idle cluster it would only thrash).
    const someoneWaits = jobs.some((j) => j.allocation.length === 0);
    if (
      widest !== null &&
      someoneWaits &&
      widest.job.allocation.length >= clusterGpus / 2 &&
      clusterGpus > 1
    ) {
      widest.state.limit = Math.max(1, Math.floor(widest.job.allocation.length / 2));
      widest.state.limitAt = now;
    }
  }

  /** What the search may do with the job this tick. */
  bounds(job: JobView, now: number, clusterGpus: number): WidthBounds {
    const state = this.#state(job);
    const width = job.allocation.length;
    const top = Math.max(1, Math.min(clusterGpus, MAX_GPUS));
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
      state = { limit: 1, limitAt: job.arrival, movedAt: null, lastWidth: job.allocation.length };
      this.#jobs.set(job.id, state);
    }
    return state;
  }
}
