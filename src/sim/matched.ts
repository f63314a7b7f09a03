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
  let belowPaid = Number.NEGATIVE_INFINITY;
  let abovePaid = Number.POSITIVE_INFINITY;
  for (const { paidGpuHoursPerHour: p } of runs) {
    if (p <= paid && p > belowPaid) belowPaid = p;
    if (p >= paid && p < abovePaid) abovePaid = p;
  }
  if (belowPaid === Number.NEGATIVE_INFINITY || abovePaid === Number.POSITIVE_INFINITY) return null;
  // Runs that pay exactly the same are one point, their average: the answer must not depend on run order.
  const below = averageJctAt(runs, belowPaid);
  if (abovePaid === belowPaid) return below;
  const t = (paid - belowPaid) / (abovePaid - belowPaid);
  return below + t * (averageJctAt(runs, abovePaid) - below);
}

function averageJctAt(runs: readonly PaidJct[], paid: number): number {
  const at = runs.filter((r) => r.paidGpuHoursPerHour === paid);
  return at.reduce((sum, r) => sum + r.avgJctSeconds, 0) / at.length;
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
