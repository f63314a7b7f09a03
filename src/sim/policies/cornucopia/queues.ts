/**
 * Cornucopia's three-queue MLFQ (its section 4.2). Interactive jobs enter Queue 1, batch jobs Queue 2.
 * - Queue 1 -> 2: an interactive job that has run longer than 2 x the mean interactive duration (a
 *   batch job labelled interactive by mistake).
 * - Queue 2 -> 3: a job whose executed time in Queue 2 reaches 2 x the RTTF (mean runtime to failure).
 * - Queue 3 -> 2: a job that has waited with no GPU at all, in Queue 3, for 2 x the mean batch duration
 *   (against starvation); its Queue 2 executed time starts again from zero.
 * Executed time is time with at least one GPU (the engine's runSeconds).
 *
 * The means are recomputed every `recomputeEvery` completed jobs (1000 in the paper) from the completed
 * jobs' executed times. Our traces have no failures, so a run ends only by completing: the RTTF is the
 * mean executed time of all completed jobs. Before the first recomputation (the paper starts from its
 * traces' statistics, which a policy here does not have), each mean is over the jobs that have arrived,
 * each estimated by its class profile at its request (`estimateSeconds`).
 */
import type { JobKind } from '../../policy.ts';

export type QueueLevel = 1 | 2 | 3;

export interface MlfqSettings {
  /** Completed jobs between recomputations of the means (the paper: 1000). */
  readonly recomputeEvery?: number;
}

export interface Thresholds {
  /** Executed seconds after which an interactive job leaves Queue 1. */
  readonly interactiveDemoteSeconds: number;
  /** Executed seconds in Queue 2 after which a job falls to Queue 3. */
  readonly batchDemoteSeconds: number;
  /** Seconds stripped of every GPU in Queue 3 after which a job is promoted to Queue 2. */
  readonly promoteSeconds: number;
}

interface Means {
  readonly interactive: number;
  readonly batch: number;
  readonly all: number;
}

/** Sums and counts per kind, for means. */
class Tally {
  #sum = { interactive: 0, batch: 0 };
  #count = { interactive: 0, batch: 0 };

  add(kind: JobKind, seconds: number): void {
    this.#sum[kind] += seconds;
    this.#count[kind] += 1;
  }

  get size(): number {
    return this.#count.interactive + this.#count.batch;
  }

  means(): Means {
    const all = this.size === 0 ? 0 : (this.#sum.interactive + this.#sum.batch) / this.size;
    const of = (kind: JobKind) => (this.#count[kind] === 0 ? all : this.#sum[kind] / this.#count[kind]);
    return { interactive: of('interactive'), batch: of('batch'), all };
  }
}

interface JobState {
  level: QueueLevel;
  /** runSeconds when the job last entered Queue 2. */
  queue2Since: number;
  /** Seconds in Queue 3 with no GPU, since it entered Queue 3. */
  stripped: number;
}

/** What the MLFQ reads of a job each round (a JobView has all of it). */
export interface QueuedJob {
  readonly id: number;
  readonly kind: JobKind;
  readonly runSeconds: number;
  /** GPUs held since the last round. */
  readonly holding: number;
}

export class Mlfq {
  readonly recomputeEvery: number;
  readonly #estimates = new Tally();
  readonly #completed = new Tally();
  #measured: Means | null = null;
  readonly #jobs = new Map<number, JobState>();
  #lastNow: number | null = null;

  constructor(settings: MlfqSettings = {}) {
    this.recomputeEvery = settings.recomputeEvery ?? 1000;
  }

  /** A job arrived: its profile estimate counts toward the means until the first recomputation. */
  onArrival(kind: JobKind, estimateSeconds: number): void {
    this.#estimates.add(kind, estimateSeconds);
  }

  /** A job completed after `runSeconds` of execution; every `recomputeEvery` completions the means move. */
  onCompletion(id: number, kind: JobKind, runSeconds: number): void {
    this.#jobs.delete(id);
    this.#completed.add(kind, runSeconds);
    if (this.#completed.size % this.recomputeEvery === 0) this.#measured = this.#completed.means();
  }

  thresholds(): Thresholds {
    const means = this.#measured ?? this.#estimates.means();
    return {
      interactiveDemoteSeconds: 2 * means.interactive,
      batchDemoteSeconds: 2 * means.all,
      promoteSeconds: 2 * means.batch,
    };
  }

  /** Moves every job between queues for this round (at simulated time `now`) and returns its queue. */
  update(jobs: readonly QueuedJob[], now: number): Map<number, QueueLevel> {
    const elapsed = this.#lastNow === null ? 0 : Math.max(0, now - this.#lastNow);
    this.#lastNow = now;
    const t = this.thresholds();
    const levels = new Map<number, QueueLevel>();
    for (const job of jobs) {
      let state = this.#jobs.get(job.id);
      if (state === undefined) {
        state = { level: job.kind === 'interactive' ? 1 : 2, queue2Since: 0, stripped: 0 };
        this.#jobs.set(job.id, state);
      } else if (state.level === 3 && job.holding === 0) {
        state.stripped += elapsed;
      }
      if (state.level === 1 && job.runSeconds > t.interactiveDemoteSeconds) {
        state.level = 2;
        state.queue2Since = job.runSeconds;
      }
      if (state.level === 2 && job.runSeconds - state.queue2Since >= t.batchDemoteSeconds) {
        state.level = 3;
        state.stripped = 0;
      } else if (state.level === 3 && state.stripped >= t.promoteSeconds) {
        state.level = 2;
        state.queue2Since = job.runSeconds;
      }
      levels.set(job.id, state.level);
    }
    return levels;
  }
}
