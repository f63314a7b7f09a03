/**
 * An opt-in warm-up for a new service: for its first `hours` the plan is made with part of the budget,
 * from `floor` at the start rising linearly to all of it. Rates estimated from a few hours of arrivals
 * cannot tell a lull from the average load; a plan for the load seen so far spends the budget on the
 * few jobs present at wide, inefficient widths, and the burst that follows finds the spend ceiling
 * with nothing banked. Planning with less banks budget that the ceiling lets a later burst spend
 * (core/spend-ceiling.ts). The cost: the paid time-average sits below the budget while it lasts, and
 * on a trace shorter than a day what is banked may never be spent (docs/budget-log.md has the numbers).
 */
export interface WarmupOptions {
  /** Hours from the start to planning with the whole budget; 0: no warm-up. */
  readonly hours: number;
  /** The fraction of the budget planned with at the start (0 < floor <= 1). */
  readonly floor: number;
}

/** The floor the service and the simulator use: half the budget at the start. */
export const WARMUP_FLOOR = 0.5;

export function warmupOptions(hours: number): WarmupOptions | null {
  if (!(Number.isFinite(hours) && hours >= 0)) {
    throw new RangeError(`warm-up hours must be a number >= 0 (0: none), got ${hours}`);
  }
  return hours > 0 ? { hours, floor: WARMUP_FLOOR } : null;
}

/** The fraction of the budget to plan with `elapsedHours` after the start (1 without a warm-up). */
export function warmupFactor(elapsedHours: number, warmup: WarmupOptions | null): number {
  if (warmup === null || !(warmup.hours > 0)) return 1;
  const progress = Math.min(1, Math.max(0, elapsedHours) / warmup.hours);
  return warmup.floor + (1 - warmup.floor) * progress;
}
