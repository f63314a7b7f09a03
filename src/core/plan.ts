import type { Instance } from './instance.ts';

/** Widths of one class, one per statistical epoch. */
export type Widths = readonly number[];

/** A fixed-width plan: for every class of the instance (same order), its widths. */
export type FixedPlan = readonly Widths[];

/** A share of a class's arriving jobs and the widths they run with. */
export interface PlanShare {
  readonly share: number;
  readonly widths: Widths;
}

/**
 * The plan the service executes: per class, one or two fixed-width plans with the share of jobs that
 * run each (a job's draw picks it: core/shares.ts). Keyed by class name.
 */
export type MixedPlan = Readonly<Record<string, readonly PlanShare[]>>;

/** Lifts a fixed plan to the public per-class form. */
export function fixedToMixed(instance: Instance, plan: FixedPlan): MixedPlan {
  const out: Record<string, PlanShare[]> = {};
  instance.classes.forEach((cls, i) => {
    out[cls.name] = [{ share: 1, widths: plan[i] as Widths }];
  });
  return out;
}

/** Mixture of plan A (share 1 - theta) and plan B (share theta), per class; identical widths merge. */
export function mixPlans(instance: Instance, a: FixedPlan, b: FixedPlan, theta: number): MixedPlan {
  const out: Record<string, PlanShare[]> = {};
  instance.classes.forEach((cls, i) => {
    const wa = a[i] as Widths;
    const wb = b[i] as Widths;
    const same = wa.length === wb.length && wa.every((k, j) => k === wb[j]);
    out[cls.name] = same
      ? [{ share: 1, widths: wa }]
      : [
          { share: 1 - theta, widths: wa },
          { share: theta, widths: wb },
        ];
  });
  return out;
}
