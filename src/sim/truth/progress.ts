/**
 * Job progress over time on a fixed placement: the job re-picks its best batch at every data-epoch
 * boundary (goodput is constant inside one), as in Pollux's simulator. For the simulator's job steps.
 */
import type { JobTruth } from './model.ts';
import type { Placement } from './placement.ts';

/** Progress reached after `seconds` on `placement` from `progress`; capped at the job's total. */
export function advanceProgress(
  truth: JobTruth,
  placement: Placement,
  progress: number,
  seconds: number,
): number {
  let p = progress;
  let left = seconds;
  while (left > 0 && p < truth.totalProgress) {
    const e = truth.dataEpochAt(p);
    const best = truth.bestConfigInEpoch(placement, e);
    if (best === undefined) return p; // no batch fits this many GPUs: no progress
    const end = truth.epochEnds[e] as number;
    const need = (end - p) / best.goodput;
    if (need > left) return p + best.goodput * left;
    p = end;
    left -= need;
  }
  return Math.min(p, truth.totalProgress);
}

/** Seconds on `placement` to go from progress `from` to `to` (Infinity if no batch fits the placement). */
export function secondsToProgress(truth: JobTruth, placement: Placement, from: number, to: number): number {
  let p = from;
  let seconds = 0;
  const target = Math.min(to, truth.totalProgress);
  while (p < target) {
    const e = truth.dataEpochAt(p);
    const best = truth.bestConfigInEpoch(placement, e);
    if (best === undefined) return Number.POSITIVE_INFINITY;
    const end = Math.min(truth.epochEnds[e] as number, target);
    seconds += (end - p) / best.goodput;
    p = end;
  }
  return seconds;
}
