/**
 * Per-run metrics. Spend is on one yardstick for every policy: total GPU-hours paid (or allocated) over
 * the arrival span, first to last submission, with what is paid after the last submission counted in.
 * Averaging over each run's own span instead would let a policy that finishes later dilute its average.
 * A span under an hour counts as one (MIN_TRACE_SPAN_HOURS): a batch's spend reads as its GPU-hours.
 */
import { SECONDS_PER_HOUR } from '../../core/units.ts';
import { MIN_TRACE_SPAN_HOURS } from '../../core/trace.ts';
import type { JobKind } from '../truth/labels.ts';

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
  /** GPU-seconds held, a co-located group's GPUs shared among its members (equal when alone). */
  readonly allocatedGpuSeconds?: number;
  /** Seconds it held GPUs. */
  readonly runSeconds?: number;
  /** Absolute deadline; Infinity when none. */
  readonly deadline?: number;
  readonly kind?: JobKind;
  /** allocatedGpuSeconds by GPU type. */
  readonly busyGpuSecondsByType?: Readonly<Record<string, number>>;
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
  /** GPU-hours allocated / paid over the whole run, per hour of the arrival span, at least one (the yardstick). */
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
  /** Jobs with a deadline that completed by it / jobs with a deadline (unfinished = missed); NaN if none. */
  readonly deadlineSatisfactionRate: number;
  readonly interactiveJobs: number;
  /**
   * Cornucopia's metric: over interactive jobs, the seconds spent with no GPU from arrival to completion
   * (or the run's end), waits after a preemption included; a job holding any GPU is not waiting.
   */
  readonly avgInteractiveQueueSeconds: number;
  /** Per GPU type present: GPU-seconds allocated (shared GPUs once) / GPU-seconds paid, over the run. */
  readonly utilizationByType: Readonly<Record<string, number>>;
  /**
   * The most paid in any 24 hours of the run, per hour: the budget a 24-hour window would have had to
   * allow (a run shorter than a day pays all it pays within one window). NaN when not measured.
   */
  readonly peakDayPaidGpuHoursPerHour: number;
}

export interface RunTotals {
  readonly start: number;
  readonly end: number;
  readonly paidGpuSeconds: number;
  readonly paidGpuSecondsByType?: Readonly<Record<string, number>>;
  readonly peakNodes: number;
  /** The most GPU-seconds paid in any BUDGET_WINDOW_SECONDS of the run (window-paid.ts). */
  readonly peakWindowPaidGpuSeconds?: number;
}

/** The service's default budget window: what a budget is held over. */
export const BUDGET_WINDOW_SECONDS = 24 * 3600;

export function summarize(records: readonly JobRecord[], totals: RunTotals): RunMetrics {
  const jcts = records
    .filter((r) => r.completedAt !== null)
    .map((r) => (r.completedAt as number) - r.arrival)
    .sort((a, b) => a - b);
  const started = records.filter((r) => r.firstStart !== null);
  const span = totals.end - totals.start;
  const lastArrival = records.reduce((last, r) => Math.max(last, r.arrival), totals.start);
  const arrivalSpan = lastArrival - totals.start;
  const yardstick = Math.max(arrivalSpan, MIN_TRACE_SPAN_HOURS * SECONDS_PER_HOUR);
  const perHour = (gpuSeconds: number) => gpuSeconds / yardstick;
  const allocated = records.reduce((sum, r) => sum + (r.allocatedGpuSeconds ?? r.attainedGpuSeconds), 0);
  const withDeadline = records.filter((r) => r.deadline !== undefined && Number.isFinite(r.deadline));
  const met = withDeadline.filter((r) => r.completedAt !== null && r.completedAt <= (r.deadline as number));
  const interactive = records.filter((r) => r.kind === 'interactive');
  const waited = (r: JobRecord) => (r.completedAt ?? totals.end) - r.arrival - (r.runSeconds ?? 0);
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
    deadlineSatisfactionRate: withDeadline.length === 0 ? Number.NaN : met.length / withDeadline.length,
    interactiveJobs: interactive.length,
    avgInteractiveQueueSeconds: mean(interactive.map((r) => Math.max(0, waited(r)))),
    utilizationByType: utilization(records, totals.paidGpuSecondsByType ?? {}),
    peakDayPaidGpuHoursPerHour:
      totals.peakWindowPaidGpuSeconds === undefined
        ? Number.NaN
        : totals.peakWindowPaidGpuSeconds / BUDGET_WINDOW_SECONDS,
  };
}

function utilization(
  records: readonly JobRecord[],
  paid: Readonly<Record<string, number>>,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [type, seconds] of Object.entries(paid)) {
    const busy = records.reduce((sum, r) => sum + (r.busyGpuSecondsByType?.[type] ?? 0), 0);
    out[type] = seconds > 0 ? busy / seconds : Number.NaN;
  }
  return out;
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
