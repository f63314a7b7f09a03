/**
 * Pollux's cluster autoscaler (AdaptDL simulator, `Cluster.step`/`autoscale`): every tick it records the
 * cluster utility, sum_j SPEEDUP_j(A_j) / (GPUs in the cluster) with speedups over 1 GPU, i.e. each job's
 * share of ideal scaling weighted by its share of the cluster. Once a window of 15 ticks is full and the
 * window's mean is outside [c - D, c + D], it picks the node count whose utility is closest to c and
 * starts a fresh window. The band is the BOA paper's: D = min(0.3 (1 - c), 0.3 c), which for Pollux's
 * default c = 0.5 gives AdaptDL's own thresholds 0.35 and 0.65.
 */

export const UTILITY_WINDOW_TICKS = 15;
export const DEFAULT_TARGET_UTILITY = 0.5;

export class PolluxAutoscaleError extends Error {
  override name = 'PolluxAutoscaleError';
}

export interface UtilityBand {
  readonly target: number;
  readonly low: number;
  readonly high: number;
}

export function utilityBand(target: number): UtilityBand {
  if (!(Number.isFinite(target) && target > 0 && target < 1)) {
    throw new PolluxAutoscaleError(
      `pollux-autoscale: target cluster efficiency must be a number strictly between 0 and 1, got ${target}`,
    );
  }
  const margin = Math.min(0.3 * (1 - target), 0.3 * target);
  return { target, low: target - margin, high: target + margin };
}

/** Utility of a cluster of `clusterGpus` GPUs whose jobs run at these speedups (over 1 GPU). */
export function clusterUtility(speedups: readonly number[], clusterGpus: number): number {
  if (!(clusterGpus > 0)) return 0;
  return speedups.reduce((sum, s) => sum + s, 0) / clusterGpus;
}

/** The last ticks' utilities; `push` returns their mean once the window is full. */
export class UtilityWindow {
  readonly #values: number[] = [];

  constructor(readonly size = UTILITY_WINDOW_TICKS) {
    if (!(Number.isInteger(size) && size >= 1)) {
      throw new PolluxAutoscaleError(`the utility window must be a whole number of ticks >= 1, got ${size}`);
    }
  }

  push(utility: number): number | undefined {
    this.#values.push(utility);
    if (this.#values.length > this.size) this.#values.shift();
    if (this.#values.length < this.size) return undefined;
    return this.#values.reduce((a, b) => a + b, 0) / this.size;
  }

  clear(): void {
    this.#values.length = 0;
  }
}

export type ScaleVerdict = 'grow' | 'shrink' | 'hold';

/** Grow above the band (when below the cap), shrink below it (when above the floor). */
export function scaleVerdict(
  meanUtility: number,
  band: UtilityBand,
  nodes: number,
  minNodes: number,
  maxNodes: number,
): ScaleVerdict {
  if (meanUtility > band.high && nodes < maxNodes) return 'grow';
  if (meanUtility < band.low && nodes > minNodes) return 'shrink';
  return 'hold';
}

/**
 * The node count in [lo, hi] whose utility is closest to `target`, by bisection (utility falls as nodes
 * are added); ties go to the larger cluster, as in AdaptDL. `utilityAt` is called O(log(hi - lo)) times.
 */
export function searchNodeCount(
  utilityAt: (nodes: number) => number,
  lo: number,
  hi: number,
  target: number,
): number {
  if (!(Number.isInteger(lo) && Number.isInteger(hi) && lo >= 0 && hi >= lo)) {
    throw new PolluxAutoscaleError(
      `node search bounds must be integers with 0 <= lo <= hi, got ${lo}..${hi}`,
    );
  }
  const memo = new Map<number, number>();
  const at = (n: number) => {
    let u = memo.get(n);
    if (u === undefined) {
      u = utilityAt(n);
      memo.set(n, u);
    }
    return u;
  };
  if (at(lo) <= target) return lo;
  if (at(hi) >= target) return hi;
  // Invariant: at(a) > target > at(b).
  let a = lo;
  let b = hi;
  while (b - a > 1) {
    const mid = Math.floor((a + b) / 2);
    if (at(mid) >= target) a = mid;
    else b = mid;
  }
  return Math.abs(at(a) - target) < Math.abs(at(b) - target) ? a : b;
}
