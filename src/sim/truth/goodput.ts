/**
 * Goodput of one batch configuration and the job's choice of the best one (the README's ground truth).
 * Pure functions over lookups, so tests can feed tiny synthetic tables.
 */
import type { AppSpec } from './apps.ts';
import type { GradStats } from './stats.ts';
import type { StepTimes } from './throughput.ts';

export interface BatchConfig {
  /** Per-GPU batch size of one forward/backward pass. */
  readonly atomicBsz: number;
  /** Gradient-accumulation steps before each synchronised step (0 = none). */
  readonly accum: number;
  /** replicas * atomicBsz * (accum + 1). */
  readonly totalBatch: number;
  /** Statistical gain g: progress (iterations at B0) made by one optimizer step. */
  readonly gain: number;
  /** Seconds per optimizer step: step_time + accum * (step_time - sync_time). */
  readonly timePerStep: number;
  /** gain / timePerStep: progress per second. */
  readonly goodput: number;
}

/** g = (var + sqr) / (var / (B/B0) + sqr), kept within [1, B/B0] as the README states. */
export function statisticalGain(stats: GradStats, batch: number, initBatch: number): number {
  const scale = batch / initBatch;
  const g = (stats.var + stats.sqr) / (stats.var / scale + stats.sqr);
  if (!Number.isFinite(g)) return 1;
  return Math.min(Math.max(g, Math.min(1, scale)), Math.max(1, scale));
}

/** Accumulation steps skip the all-reduce, so they cost step_time - sync_time each. */
export function timePerStep(times: StepTimes, accum: number): number {
  return times.stepTime + accum * (times.stepTime - times.syncTime);
}

export type BatchBounds = Pick<AppSpec, 'initBatch' | 'maxBatch' | 'minLocalBsz' | 'maxLocalBsz'>;

/**
 * Enumerates every integer (atomic, accum) with minLocalBsz <= atomic <= maxLocalBsz and
 * initBatch <= replicas * atomic * (accum + 1) <= maxBatch, and returns the one with the highest goodput
 * (ties: fewest accumulation steps, then smallest atomic batch). Undefined when no configuration fits,
 * e.g. when replicas * minLocalBsz > maxBatch.
 */
export function bestBatchConfig(
  bounds: BatchBounds,
  replicas: number,
  timesAt: (atomicBsz: number) => StepTimes,
  statsAt: (totalBatch: number) => GradStats,
): BatchConfig | undefined {
  const { initBatch, maxBatch, minLocalBsz, maxLocalBsz } = bounds;
  let best: BatchConfig | undefined;
  for (let accum = 0; replicas * minLocalBsz * (accum + 1) <= maxBatch; accum++) {
    const per = replicas * (accum + 1);
    const lo = Math.max(minLocalBsz, Math.ceil(initBatch / per));
    const hi = Math.min(maxLocalBsz, Math.floor(maxBatch / per));
    for (let atomic = lo; atomic <= hi; atomic++) {
      const totalBatch = per * atomic;
      const time = timePerStep(timesAt(atomic), accum);
      const gain = statisticalGain(statsAt(totalBatch), totalBatch, initBatch);
      const goodput = gain / time;
      if (best === undefined || goodput > best.goodput) {
        best = { atomicBsz: atomic, accum, totalBatch, gain, timePerStep: time, goodput };
      }
    }
  }
  return best;
}
