/**
 * When a budget window's paid average comes back within its budget if the paid rate stays as it is
 * now. The window is sliding: at a later end `e` it covers [max(e - window, floor), e], so old spend
 * leaves it as time passes and the answer is not a division of the debt by the room the rate leaves.
 *
 * Paid over budget (both GPU-time over the window) at `now + t` is
 *   D(t) = integral over [s(t), now] of (paid - budget) + (paidNow - budgetNow) * t,
 * with s(t) the window's start then. D is continuous and linear between the times s(t) crosses a step
 * of the past paid or budget, so its value at those times and a linear crossing give it exactly.
 */

/** GPUs paid over [start, end) (a ledger node: its launch until gone, open ones until now). */
export interface PaidSpan {
  readonly start: number;
  readonly end: number;
  readonly gpus: number;
}

/** A budget value in force from `setAt` until the next one's; the first reaches back as far as asked. */
export interface BudgetStep {
  readonly gpuHoursPerHour: number;
  readonly setAt: number;
}

export interface BackWithinInput {
  readonly now: number;
  readonly windowMs: number;
  /** The window never starts before this (the service's start). */
  readonly floor: number;
  /** The past paid, up to now. */
  readonly paid: readonly PaidSpan[];
  /** The budgets, oldest first (at least one); the last stays in force. */
  readonly budgets: readonly BudgetStep[];
  /** GPUs paid now: assumed paid from now on. */
  readonly paidNow: number;
}

export type BackWithin =
  /** Within the budget now (paid average at or below the window's budget): nothing to wait for. */
  | { readonly kind: 'within' }
  /** Over now; from `at` on the window's average stays within the budget. */
  | { readonly kind: 'at'; readonly at: number }
  /** Over now, and the paid rate now is above the budget: a window of it alone is over. */
  | { readonly kind: 'not-at-current-rate' };

export function backWithinBudget(input: BackWithinInput): BackWithin {
  const { now, windowMs, floor, paid, budgets, paidNow } = input;
  if (!(windowMs > 0)) throw new Error(`windowMs must be positive, got ${windowMs}`);
  const last = budgets[budgets.length - 1];
  if (!last) throw new Error('budgets must hold at least one value');
  const budgetNow = last.gpuHoursPerHour;
  const start0 = Math.max(now - windowMs, floor);

  // (paid - budget) over the past as steps from start0 to now, with its running integral.
  const deltas = new Map<number, number>();
  const step = (time: number, by: number) => {
    const at = Math.max(time, start0);
    if (at >= now) return;
    deltas.set(at, (deltas.get(at) ?? 0) + by);
  };
  for (const span of paid) {
    if (span.end <= start0 || span.end <= span.start) continue;
    step(span.start, span.gpus);
    step(Math.min(span.end, now), -span.gpus);
  }
  budgets.forEach((b, i) => {
    const before = i === 0 ? 0 : (budgets[i - 1] as BudgetStep).gpuHoursPerHour;
    step(i === 0 ? start0 : b.setAt, -(b.gpuHoursPerHour - before));
  });
  const times = [...deltas.keys()].sort((a, b) => a - b);
  const areas: number[] = [];
  const levels: number[] = [];
  let area = 0;
  let level = 0;
  let prev = start0;
  for (const time of times) {
    area += level * (time - prev);
    level += deltas.get(time) as number;
    areas.push(area);
    levels.push(level);
    prev = time;
  }
  /** Integral of (paid - budget) from start0 to `x` (x within [start0, now]). */
  const integral = (x: number): number => {
    let lo = 0;
    let hi = times.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((times[mid] as number) <= x) lo = mid + 1;
      else hi = mid;
    }
    const k = lo - 1;
    if (k < 0) return 0;
    return (areas[k] as number) + (levels[k] as number) * (x - (times[k] as number));
  };
  const pastTotal = integral(now);
  const over = (t: number): number => {
    const s = Math.min(now, Math.max(now + t - windowMs, floor));
    return pastTotal - integral(s) + (paidNow - budgetNow) * t;
  };

  // Rounding: a difference below a millionth of a GPU-millisecond per hour of window is none.
  const tolerance = 1e-9 * windowMs * Math.max(1, budgetNow, paidNow);
  if (over(0) <= tolerance) return { kind: 'within' };
  // Once the window holds only time from now on it is over by (paidNow - budgetNow) for good.
  if (paidNow > budgetNow) return { kind: 'not-at-current-rate' };

  // The times t in (0, windowMs] where D's slope changes: the window's start leaves the floor, or
  // reaches a step of the past.
  const breaks = new Set<number>([windowMs]);
  const leavesFloor = floor + windowMs - now;
  if (leavesFloor > 0 && leavesFloor < windowMs) breaks.add(leavesFloor);
  for (const time of times) {
    const t = time - now + windowMs;
    if (t > 0 && t < windowMs) breaks.add(t);
  }
  const ts = [0, ...[...breaks].sort((a, b) => a - b)];
  const values = ts.map(over);
  // From the end back: the last time D is above zero, and where it crosses down after it.
  for (let i = ts.length - 1; i >= 0; i--) {
    if ((values[i] as number) <= tolerance) continue;
    // Over at the window's full turn too: rounding only (it is (paidNow - budgetNow) * window there).
    if (i === ts.length - 1) return { kind: 'at', at: now + windowMs };
    const t0 = ts[i] as number;
    const t1 = ts[i + 1] as number;
    const v0 = values[i] as number;
    const v1 = values[i + 1] as number;
    const t = t0 + ((t1 - t0) * v0) / (v0 - v1);
    return { kind: 'at', at: Math.ceil(now + Math.min(t, t1)) };
  }
  return { kind: 'within' };
}
