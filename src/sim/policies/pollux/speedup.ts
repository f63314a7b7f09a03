/**
 * Each job's goodput at the widths Pollux may give it, from the GoodputOracle. Pollux fits a goodput model
 * online; the simulator's oracle answers from the ground truth instead, as if that fit were perfect.
 */
import { gpusPerNodeOf } from '../../../core/exec/placement.ts';
import type { GoodputOracle, JobView } from '../../policy.ts';
import { packedPlacement } from '../../truth/placement.ts';

/** AdaptDL's simulator caps a job at 64 replicas and 16 nodes. */
export const MAX_REPLICAS = 64;
export const MAX_NODES_PER_JOB = 16;
/** Every width up to this is a candidate; above it only whole nodes (keeps the search small). */
export const ALL_WIDTHS_UP_TO = 16;

/** Goodput per (job, placement), memoised for one scheduling tick (goodput moves with progress). */
export class GoodputTable {
  readonly #memo = new Map<string, number>();

  constructor(
    readonly oracle: GoodputOracle,
    readonly gpusPerNode: number,
  ) {}

  /** Goodput at a placement given as GPUs per node (any order). */
  at(jobId: number, placement: readonly number[]): number {
    const key = `${jobId}:${placement.join(',')}`;
    let value = this.#memo.get(key);
    if (value === undefined) {
      value = Math.max(0, this.oracle.goodput(jobId, placement));
      this.#memo.set(key, value);
    }
    return value;
  }

  /** Goodput of `width` GPUs packed on as few nodes as possible. */
  packed(jobId: number, width: number): number {
    return this.at(jobId, packedPlacement(width, this.gpusPerNode));
  }

  /** Goodput on an allocation (node id per GPU). */
  onAllocation(jobId: number, allocation: readonly number[]): number {
    return this.at(jobId, gpusPerNodeOf(allocation));
  }
}

/** Candidate widths up to `maxWidth`: 1..16, then multiples of the node size. */
export function candidateWidths(maxWidth: number, gpusPerNode: number): number[] {
  const out: number[] = [];
  for (let w = 1; w <= maxWidth; w++) {
    if (w <= ALL_WIDTHS_UP_TO || w % gpusPerNode === 0) out.push(w);
  }
  return out;
}

/**
 * AdaptDL explores gradually: a job may get at most twice the most replicas it has run on (and >= 1),
 * because its fitted model is unreliable beyond what it has profiled. Optional here (see README.md).
 */
export function explorationCap(maxSeenWidth: number): number {
  return Math.min(MAX_REPLICAS, Math.max(1, 2 * maxSeenWidth));
}

export interface WidthOption {
  readonly width: number;
  /** Goodput at the option's placement (packed, or the current one when kept). */
  readonly goodput: number;
  /** Goodput times the restart factor (1 when kept): what the fitness sees. */
  readonly effective: number;
  /** True for the job's current allocation left exactly as it is. */
  readonly keep: boolean;
}

export interface JobCurve {
  readonly id: number;
  /** Ascending width; no option is dominated (a wider one always has a higher effective goodput). */
  readonly options: readonly WidthOption[];
  /** Goodput on 1 GPU: the normaliser of the autoscaler's utility. */
  readonly oneGpuGoodput: number;
  readonly restartFactor: number;
}

/** A job's options at every candidate width up to `maxWidth`, plus staying where it is. */
export function buildJobCurve(
  job: JobView,
  table: GoodputTable,
  maxWidth: number,
  restartFactor: number,
): JobCurve {
  const all: WidthOption[] = [];
  for (const width of candidateWidths(maxWidth, table.gpusPerNode)) {
    const goodput = table.packed(job.id, width);
    all.push({ width, goodput, effective: goodput * restartFactor, keep: false });
  }
  if (job.allocation.length > 0) {
    const goodput = table.onAllocation(job.id, job.allocation);
    all.push({ width: job.allocation.length, goodput, effective: goodput, keep: true });
  }
  // Narrowest first, and at equal width the better option first, so the scan keeps that one.
  all.sort((a, b) => a.width - b.width || b.effective - a.effective);
  const options: WidthOption[] = [];
  let best = 0;
  for (const option of all) {
    // The narrowest option always stays, so a job whose every option is worthless still gets 1 GPU.
    if (options.length === 0 || option.effective > best) {
      options.push(option);
      best = option.effective;
    }
  }
  return { id: job.id, options, oneGpuGoodput: table.packed(job.id, 1), restartFactor };
}

/**
 * Goodput at the fair share: ceil(G / J) GPUs packed (the AdaptDL simulator's base for SPEEDUP). When no
 * batch size fits that many GPUs, the job's best goodput among its options stands in.
 */
export function fairShareGoodput(curve: JobCurve, table: GoodputTable, gpus: number, jobs: number): number {
  const width = Math.min(MAX_REPLICAS, Math.max(1, Math.ceil(gpus / Math.max(1, jobs))));
  const fair = table.packed(curve.id, width);
  if (fair > 0) return fair;
  return Math.max(curve.oneGpuGoodput, ...curve.options.map((o) => o.goodput));
}
