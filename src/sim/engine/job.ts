/**
 * One job's state in the simulation. Progress follows the ground truth at the job's actual placement
 * (its GPUs per node), continuously between ticks; allocations only change at ticks.
 */
import type { TraceJob } from '../../core/trace.ts';
import type { GpuType } from '../gpu-types.ts';
import type { Allocation, JobView } from '../policy.ts';
import { type StepSplit, stepSplitT4 } from '../truth/hardware.ts';
import type { JobKind } from '../truth/labels.ts';
import type { JobTruth } from '../truth/model.ts';
import { advanceProgress, secondsToProgress } from '../truth/progress.ts';

/** What the engine knows about a job's class: the truth and where its statistical epochs end. */
export interface JobClass {
  readonly truth: JobTruth;
  /** Progress at the end of each statistical epoch of the class profile (the last one = total). */
  readonly statEpochEnds: readonly number[];
}

/** Relative shortfall of the total progress still counted as finished (float rounding, not work). */
const FINISH_TOLERANCE = 1e-12;

export class SimJob {
  readonly id: number;
  readonly name: string;
  readonly app: string;
  readonly arrival: number;
  readonly requestedGpus: number;
  readonly requestedBatch: number;
  progress = 0;
  allocation: readonly number[] = [];
  /** GPUs per node of the allocation, largest first: the truth model's placement. */
  placement: readonly number[] = [];
  rescales = 0;
  restartingUntil: number | null = null;
  attainedGpuSeconds = 0;
  runSeconds = 0;
  firstStart: number | null = null;
  completedAt: number | null = null;
  /** Absolute deadline; Infinity when none. */
  deadline = Number.POSITIVE_INFINITY;
  kind: JobKind = 'batch';
  /** The other members of its co-location group (set by the engine each tick). */
  colocatedWith: readonly number[] = [];
  /** Rate relative to its isolated rate on t4 at its placement (GPU type and co-location; 1 = as measured). */
  speed = 1;
  /** GPUs of its allocation per GPU type (set by the engine with the allocation). */
  gpusByType: ReadonlyMap<GpuType, number> = new Map();
  /** GPU-seconds held per type, a co-located group's GPUs shared among its members. */
  readonly busyByType = new Map<GpuType, number>();
  /** GPU-seconds held, a co-located group's GPUs shared among its members (the cluster's allocation). */
  allocatedGpuSeconds = 0;

  constructor(
    id: number,
    job: TraceJob,
    readonly jobClass: JobClass,
  ) {
    this.id = id;
    this.name = job.name;
    this.app = job.application;
    this.arrival = job.time;
    this.requestedGpus = job.numReplicas;
    this.requestedBatch = job.batchSize;
  }

  get statEpoch(): number {
    const ends = this.jobClass.statEpochEnds;
    for (let j = 0; j < ends.length - 1; j++) if (this.progress < (ends[j] as number)) return j;
    return ends.length - 1;
  }

  view(): JobView {
    return {
      id: this.id,
      name: this.name,
      app: this.app,
      arrival: this.arrival,
      requestedGpus: this.requestedGpus,
      requestedBatch: this.requestedBatch,
      progressFraction: this.progress / this.jobClass.truth.totalProgress,
      statEpoch: this.statEpoch,
      allocation: this.allocation,
      rescales: this.rescales,
      restartingUntil: this.restartingUntil,
      attainedGpuSeconds: this.attainedGpuSeconds,
      runSeconds: this.runSeconds,
      deadline: this.deadline,
      kind: this.kind,
      colocatedWith: this.colocatedWith,
    };
  }

  #split: { placement: readonly number[]; epoch: number; split: StepSplit | undefined } | null = null;

  /**
   * Its current optimizer step on t4 at its placement, split into compute and communication; kept until
   * the placement or the data epoch changes (the best batch only changes then).
   */
  stepSplit(): StepSplit | undefined {
    const truth = this.jobClass.truth;
    const epoch = truth.dataEpochAt(this.progress);
    const cached = this.#split;
    if (cached !== null && cached.placement === this.placement && cached.epoch === epoch) return cached.split;
    const best = truth.bestConfigInEpoch(this.placement, epoch);
    const split = best === undefined ? undefined : stepSplitT4(truth, this.placement, best);
    this.#split = { placement: this.placement, epoch, split };
    return split;
  }

  /** When the job would finish if it ran from `from` at its current speed and placement. */
  finishTime(from: number): number {
    if (this.allocation.length === 0 || this.speed <= 0) return Number.POSITIVE_INFINITY;
    const truth = this.jobClass.truth;
    const start = Math.max(from, this.restartingUntil ?? from);
    return start + secondsToProgress(truth, this.placement, this.progress, truth.totalProgress) / this.speed;
  }

  /**
   * Applies a tick's allocation. Any change to a non-empty allocation is a (re)start: `rescaleSeconds` of
   * no progress with the GPUs held (the first start too, as BOA's model charges r on the first epoch).
   * Returns true when the job (re)started.
   */
  assign(allocation: Allocation, placement: readonly number[], now: number, rescaleSeconds: number): boolean {
    if (sameAllocation(allocation, this.allocation)) return false;
    this.allocation = allocation;
    this.placement = placement;
    if (allocation.length === 0) {
      this.restartingUntil = null;
      return false;
    }
    this.rescales++;
    this.firstStart ??= now;
    this.restartingUntil = now + rescaleSeconds;
    return true;
  }

  /**
   * The statistical epochs it would enter in (from, until] at its current speed and placement, and when:
   * read before `advance`. The last end is the finish, which `advance` returns.
   */
  epochsEntered(from: number, until: number): Array<{ epoch: number; at: number }> {
    if (this.allocation.length === 0 || this.speed <= 0) return [];
    const truth = this.jobClass.truth;
    const ends = this.jobClass.statEpochEnds;
    const start = Math.max(from, this.restartingUntil ?? from);
    const entered: Array<{ epoch: number; at: number }> = [];
    for (let j = this.statEpoch; j < ends.length - 1; j++) {
      const at =
        start + secondsToProgress(truth, this.placement, this.progress, ends[j] as number) / this.speed;
      if (at > until) break;
      entered.push({ epoch: j + 1, at });
    }
    return entered;
  }

  /**
   * Runs the job over [from, until]; returns its completion time when it finishes in that interval.
   * Only the data epochs the interval crosses are looked up in the truth (a job's whole future at
   * every placement it ever gets would cost far more than the run).
   */
  advance(from: number, until: number, groupSize = 1): number | null {
    const gpus = this.allocation.length;
    if (gpus === 0) return null;
    const start = Math.max(from, this.restartingUntil ?? from);
    if (this.restartingUntil !== null && this.restartingUntil <= until) this.restartingUntil = null;
    const truth = this.jobClass.truth;
    // speed is exactly 1 on t4 alone, so (until - start) * 1 keeps the measured model's numbers bit for bit.
    const reached =
      until > start
        ? advanceProgress(truth, this.placement, this.progress, (until - start) * this.speed)
        : this.progress;
    // Work summed interval by interval can fall a few ulps short of the total when it ends exactly on a
    // tick: that is the finish, not one more interval holding the GPUs.
    if (reached < truth.totalProgress * (1 - FINISH_TOLERANCE)) {
      this.progress = reached;
      this.#hold(gpus, until - from, groupSize);
      return null;
    }
    const done = Math.min(
      until,
      start + secondsToProgress(truth, this.placement, this.progress, truth.totalProgress) / this.speed,
    );
    this.#hold(gpus, done - from, groupSize);
    this.progress = truth.totalProgress;
    this.completedAt = done;
    this.allocation = [];
    this.placement = [];
    this.restartingUntil = null;
    return done;
  }

  #hold(gpus: number, seconds: number, groupSize: number): void {
    this.attainedGpuSeconds += gpus * seconds;
    this.allocatedGpuSeconds += groupSize === 1 ? gpus * seconds : (gpus * seconds) / groupSize;
    this.runSeconds += seconds;
    for (const [type, n] of this.gpusByType) {
      this.busyByType.set(type, (this.busyByType.get(type) ?? 0) + (n * seconds) / groupSize);
    }
  }
}

function sameAllocation(a: Allocation, b: Allocation): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
