import { type Instance, type PlanningClass, speedupAt } from './instance.ts';
import type { FixedPlan, MixedPlan, Widths } from './plan.ts';
import { SECONDS_PER_HOUR } from './units.ts';

/** Time and GPU-time of one class-i job under fixed widths (Lemma 4.8). */
export interface JobCost {
  /** Completion time in seconds, rescales included. */
  readonly seconds: number;
  /** GPU-seconds the job holds, rescales included. */
  readonly gpuSeconds: number;
}

/** Lemma 4.8: T = sum(x/s(k) + r d), G = sum k (x/s(k) + r d); d = 1 on the first epoch and on a width change. */
export function jobCost(cls: PlanningClass, widths: Widths): JobCost {
  if (widths.length !== cls.epochs.length) {
    throw new Error(`class ${cls.name}: ${widths.length} widths for ${cls.epochs.length} epochs`);
  }
  let seconds = 0;
  let gpuSeconds = 0;
  cls.epochs.forEach((epoch, j) => {
    const k = widths[j] as number;
    const rescale = j === 0 || k !== widths[j - 1] ? cls.rescaleSeconds : 0;
    const epochSeconds = epoch.workSeconds / speedupAt(epoch, k) + rescale;
    seconds += epochSeconds;
    gpuSeconds += k * epochSeconds;
  });
  return { seconds, gpuSeconds };
}

/** What a plan buys: its time-average GPUs and its (weighted) average JCT. */
export interface PlanValue {
  /** Time-average GPUs rented by the plan, GPU-hours per hour. */
  readonly gpuHoursPerHour: number;
  /** Weighted average JCT in seconds (plain average when all weights are 1). */
  readonly avgJctSeconds: number;
}

/** Aggregates per-class (time, GPU-time) pairs with the arrival rates and weights. */
export function aggregate(instance: Instance, costs: readonly JobCost[]): PlanValue {
  let weightedTime = 0;
  let weightedRate = 0;
  let gpuSecondsPerHour = 0;
  instance.classes.forEach((cls, i) => {
    const cost = costs[i] as JobCost;
    weightedTime += cls.ratePerHour * cls.weight * cost.seconds;
    weightedRate += cls.ratePerHour * cls.weight;
    gpuSecondsPerHour += cls.ratePerHour * cost.gpuSeconds;
  });
  return {
    gpuHoursPerHour: gpuSecondsPerHour / SECONDS_PER_HOUR,
    avgJctSeconds: weightedTime / weightedRate,
  };
}

export function evaluateFixed(instance: Instance, plan: FixedPlan): PlanValue {
  return aggregate(
    instance,
    instance.classes.map((cls, i) => jobCost(cls, plan[i] as Widths)),
  );
}

/** Evaluates a mixed plan: each class's cost is the share-weighted mean of its fixed-width plans. */
export function evaluateMixed(instance: Instance, plan: MixedPlan): PlanValue {
  const costs = instance.classes.map((cls) => {
    const shares = plan[cls.name];
    if (!shares || shares.length === 0) throw new Error(`plan has no widths for class ${cls.name}`);
    const total = shares.reduce((sum, s) => sum + s.share, 0);
    if (Math.abs(total - 1) > 1e-9) throw new Error(`class ${cls.name}: shares sum to ${total}, not 1`);
    let seconds = 0;
    let gpuSeconds = 0;
    for (const { share, widths } of shares) {
      const cost = jobCost(cls, widths);
      seconds += share * cost.seconds;
      gpuSeconds += share * cost.gpuSeconds;
    }
    return { seconds, gpuSeconds };
  });
  return aggregate(instance, costs);
}
