/**
 * Per-run metrics. Spend is on one yardstick for every policy: total GPU-hours paid (or allocated) over
 * the arrival span, first to last submission, with what is paid after the last submission counted in.
 * Averaging over each run's own span instead would let a policy that finishes later dilute its average.
 * A trace whose jobs all arrive at once has no arrival span: the run span stands in.
 */
import { SECONDS_PER_HOUR } from '../../core/evaluate.ts';

export interface JobRecord {
  readonly id: number;
  readonly name: string;
  readonly app: string;
  readonly arrival: number;
  /** First time the job held a GPU; null if it never did. */
  readonly firstStart: number | null;
  /** Null when the run stopped at its horizon first. */
  readonly completedAt: number | null;
  /** Starts, restarts and rescales (the first start included). */
  readonly rescales: number;
  readonly attainedGpuSeconds: number;
}

export interface RunMetrics {
  readonly jobs: number;
  readonly completed: number;
  /** Over completed jobs: completion - arrival. */
  readonly avgJctSeconds: number;
  /** Nearest-rank 95th percentile of the completed jobs' JCTs. */
  readonly p95JctSeconds: number;
  readonly p50JctSeconds: number;
  readonly p99JctSeconds: number;
  /** GPU-hours allocated / paid over the whole run, per hour of the arrival span (the yardstick). */
  readonly allocatedGpuHoursPerHour: number;
  readonly paidGpuHoursPerHour: number;
  /** Restarts and rescales after each job's first start (first starts are not counted). */
  readonly rescales: number;
  /** Over jobs that started: first GPU - arrival. */
  readonly avgQueueSeconds: number;
  /** Run span (first arrival to last completion, or to the stop at the horizon), hours. */
  readonly spanHours: number;
  /** First to last arrival, hours: what spend is averaged over. */
  readonly arrivalSpanHours: number;
  readonly peakNodes: number;
}

export interface RunTotals {
  readonly start: number;
  readonly end: number;
  readonly paidGpuSeconds: number;
  readonly peakNodes: number;
}

export function summarize(records: readonly JobRecord[], totals: RunTotals): RunMetrics {
  const jcts = records
    .filter((r) => r.completedAt !== null)
    .map((r) => (r.completedAt as number) - r.arrival)
    .sort((a, b) => a - b);
  const started = records.filter((r) => r.firstStart !== null);
  const span = totals.end - totals.start;
  const lastArrival = records.reduce((last, r) => Math.max(last, r.arrival), totals.start);
  const arrivalSpan = lastArrival - totals.start;
  const yardstick = arrivalSpan > 0 ? arrivalSpan : span;
  const perHour = (gpuSeconds: number) => (yardstick > 0 ? gpuSeconds / yardstick : 0);
  const allocated = records.reduce((sum, r) => sum + r.attainedGpuSeconds, 0);
  return {
    jobs: records.length,
    completed: jcts.length,
    avgJctSeconds: mean(jcts),
    p95JctSeconds: percentile(jcts, 0.95),
    p50JctSeconds: percentile(jcts, 0.5),
    p99JctSeconds: percentile(jcts, 0.99),
    allocatedGpuHoursPerHour: perHour(allocated),
    paidGpuHoursPerHour: perHour(totals.paidGpuSeconds),
    rescales: started.reduce((sum, r) => sum + r.rescales - 1, 0),
    avgQueueSeconds: mean(started.map((r) => (r.firstStart as number) - r.arrival)),
    spanHours: span / SECONDS_PER_HOUR,
    arrivalSpanHours: arrivalSpan / SECONDS_PER_HOUR,
    peakNodes: totals.peakNodes,
  };
}

function mean(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

/** Nearest rank: the smallest value with at least q of the values at or below it. */
export function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil(q * sorted.length));
  return sorted[rank - 1] as number;
}
