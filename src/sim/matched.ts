/**
 * Comparing policies at the same spend: each policy's knob (budget, target utility) only steers what it
 * pays, so runs are compared at a matched paid usage, interpolated between the nearest runs.
 */
export interface PaidJct {
  readonly paidGpuHoursPerHour: number;
  readonly avgJctSeconds: number;
}

/**
 * Average JCT at `paid` GPU-hours/hour, linear between the run paying the most at or below it and the
 * run paying the least at or above it; null when the runs do not bracket it (no extrapolation).
 * Knobs need not be monotone in what they pay (Pollux's target is not), so runs are taken by paid.
 */
export function jctAtPaid(runs: readonly PaidJct[], paid: number): number | null {
  const exact = runs.filter((r) => r.paidGpuHoursPerHour === paid);
  if (exact.length > 0) return exact.reduce((s, r) => s + r.avgJctSeconds, 0) / exact.length;
  let below: PaidJct | undefined;
  let above: PaidJct | undefined;
  for (const run of runs) {
    const p = run.paidGpuHoursPerHour;
    if (p <= paid && (below === undefined || p > below.paidGpuHoursPerHour)) below = run;
    if (p >= paid && (above === undefined || p < above.paidGpuHoursPerHour)) above = run;
  }
  if (below === undefined || above === undefined) return null;
  const t = (paid - below.paidGpuHoursPerHour) / (above.paidGpuHoursPerHour - below.paidGpuHoursPerHour);
  return below.avgJctSeconds + t * (above.avgJctSeconds - below.avgJctSeconds);
}
