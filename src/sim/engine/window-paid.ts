/**
 * The most GPU-seconds paid in any window of `windowSeconds` within [from, to]: what a budget held over
 * that window (the service's budget window, 24 hours by default) would have had to allow. Paid GPUs are
 * a step function of time (each node from its request until it is gone), so the paid integral over a
 * window is piecewise linear in where the window starts, and its maximum is at a start where the window
 * begins or ends at a step: a sweep over those, O(n log n) in the nodes.
 */
export interface PaidInterval {
  readonly gpus: number;
  readonly from: number;
  /** Until when it was paid; null: still held at `to`. */
  readonly until: number | null;
}

export function maxPaidInWindow(
  intervals: readonly PaidInterval[],
  from: number,
  to: number,
  windowSeconds: number,
): number {
  if (!(to > from) || !(windowSeconds > 0)) return 0;
  const steps: Array<[number, number]> = [];
  for (const { gpus, from: begin, until } of intervals) {
    const a = Math.max(begin, from);
    const b = Math.min(until ?? to, to);
    if (b > a) steps.push([a, gpus], [b, -gpus]);
  }
  if (steps.length === 0) return 0;
  steps.sort((x, y) => x[0] - y[0]);
  // Cumulative paid GPU-seconds at each step time, and the GPUs paid from it on.
  const times: number[] = [];
  const paidAt: number[] = [];
  const rateAfter: number[] = [];
  let paid = 0;
  let rate = 0;
  for (const [time, delta] of steps) {
    const last = times.length - 1;
    if (last >= 0 && times[last] === time) {
      rate += delta;
      rateAfter[last] = rate;
      continue;
    }
    if (last >= 0) paid += rate * (time - (times[last] as number));
    rate += delta;
    times.push(time);
    paidAt.push(paid);
    rateAfter.push(rate);
  }
  const cumulative = (x: number): number => {
    if (x <= (times[0] as number)) return 0;
    let lo = 0;
    let hi = times.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((times[mid] as number) <= x) lo = mid;
      else hi = mid - 1;
    }
    return (paidAt[lo] as number) + (rateAfter[lo] as number) * (x - (times[lo] as number));
  };
  const latestStart = Math.max(from, to - windowSeconds);
  let best = 0;
  for (const time of times) {
    for (const start of [time, time - windowSeconds]) {
      const s = Math.min(Math.max(start, from), latestStart);
      best = Math.max(best, cumulative(Math.min(s + windowSeconds, to)) - cumulative(s));
    }
  }
  return best;
}
