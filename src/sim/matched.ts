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

/** What a run reports at a matched paid usage, each interpolated on its own (same two runs). */
export const MATCHED_METRICS = [
  'avgJctSeconds',
  'p50JctSeconds',
  'p95JctSeconds',
  'p99JctSeconds',
  'avgQueueSeconds',
] as const;
export type MatchedMetric = (typeof MATCHED_METRICS)[number];
export type RunMetricsAtPaid = Record<MatchedMetric, number>;

/** Every matched metric at `paid`, from the same bracketing runs as jctAtPaid; null when not bracketed. */
export function metricsAtPaid(
  runs: ReadonlyArray<{ readonly paidGpuHoursPerHour: number } & RunMetricsAtPaid>,
  paid: number,
): RunMetricsAtPaid | null {
  const entries = MATCHED_METRICS.map((metric) => [
    metric,
    jctAtPaid(
      runs.map((r) => ({ paidGpuHoursPerHour: r.paidGpuHoursPerHour, avgJctSeconds: r[metric] })),
      paid,
    ),
  ]);
  if (entries.some(([, v]) => v === null)) return null;
  return Object.fromEntries(entries) as RunMetricsAtPaid;
}
