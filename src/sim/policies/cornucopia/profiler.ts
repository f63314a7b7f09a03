/**
 * Cornucopia's ramp-up profiler (its section 4.3, Algorithm 1) and scaling factors (Eq. 1).
 *
 * Algorithm 1 grows a starting job from 1 to 2 x its request GPUs, one GPU at a time, and caches the
 * throughput measured at each width; the profile is taken once, when the job first starts, and never
 * repeated. In the simulator the measurement is the class profile's speedup table for the statistical
 * epoch the job is in at that moment (the same table every policy reads), linearly interpolated between
 * listed widths, flat past the widest: the profiler measures throughput, dips across node boundaries
 * included. The ramp's own few minutes are not simulated (the paper puts them at 314 s for a 64-GPU job).
 *
 * Eq. 1: S^1 = 1 and S^j = (T^(j+1) - T^j) / (T^2 - T^1) for j > 1, the gain of the job's (j+1)-th GPU
 * relative to its second. A job whose second GPU gains nothing (T^2 <= T^1) leaves Eq. 1 undefined; we
 * give it S = 0 throughout (no GPU past the first is worth anything to it).
 */
import { type EpochProfile, listedWidths } from '../../../core/profile.ts';

export interface RampUpProfile {
  /** throughput[j] at j GPUs, j = 1..maxWidth (index 0 unused), T^1 = 1. */
  readonly throughput: readonly number[];
  /** factor[j] = S^j, j = 1..maxWidth - 1 (index 0 unused): the gain of going from j to j + 1 GPUs. */
  readonly factor: readonly number[];
  /** The widest profiled width: twice the request. */
  readonly maxWidth: number;
}

/** Algorithm 1 on the job's current epoch: throughput at 1..2 x request GPUs, and Eq. 1's factors. */
export function rampUpProfile(epoch: EpochProfile, requestedGpus: number): RampUpProfile {
  const maxWidth = 2 * Math.max(1, Math.floor(requestedGpus));
  const throughput = [0];
  for (let j = 1; j <= maxWidth; j++) throughput.push(measuredSpeedup(epoch, j));
  return { throughput, factor: scalingFactors(throughput), maxWidth };
}

/** Eq. 1 over a throughput vector indexed by width (index 0 unused). */
export function scalingFactors(throughput: readonly number[]): number[] {
  const factor = [0];
  const first = (throughput[2] ?? 0) - (throughput[1] ?? 0);
  for (let j = 1; j < throughput.length - 1; j++) {
    if (!(first > 0)) factor.push(0);
    else if (j === 1) factor.push(1);
    else factor.push(((throughput[j + 1] as number) - (throughput[j] as number)) / first);
  }
  return factor;
}

/**
 * S at `width` GPUs, the factor Algorithm 2 compares: the gain of one more GPU. A waiting job's first GPU
 * rates +Infinity (a job of the level starts before any grows); at or past the profiled width, -Infinity
 * (no profile says what more GPUs would do).
 */
export function growthFactor(profile: RampUpProfile, width: number): number {
  if (width <= 0) return Number.POSITIVE_INFINITY;
  if (width >= profile.maxWidth) return Number.NEGATIVE_INFINITY;
  return profile.factor[width] as number;
}

/**
 * The factor of the last GPU a job at `width` holds, the one Algorithm 3 compares when it revokes a GPU:
 * S^(width - 1). A job's only GPU rates +Infinity, so jobs are shrunk before any is stopped.
 */
export function lastGpuFactor(profile: RampUpProfile, width: number): number {
  if (width <= 1) return Number.POSITIVE_INFINITY;
  return profile.factor[Math.min(width, profile.maxWidth) - 1] as number;
}

/** The epoch's speedup at `width`: as listed, linear between listed widths, flat past the widest. */
export function measuredSpeedup(epoch: EpochProfile, width: number): number {
  const widths = listedWidths(epoch);
  let below = widths[0] as number;
  for (const w of widths) {
    if (w === width) return epoch.speedup[String(w)] as number;
    if (w > width) {
      const low = epoch.speedup[String(below)] as number;
      const high = epoch.speedup[String(w)] as number;
      return low + ((high - low) * (width - below)) / (w - below);
    }
    below = w;
  }
  return epoch.speedup[String(below)] as number;
}
