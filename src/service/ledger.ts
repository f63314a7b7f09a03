/**
 * The budget ledger's arithmetic: paid GPU-time from the nodes that really ran (from their launch
 * times), allocated GPU-time from the jobs' allocations, as time-averages (GPU-hours per hour).
 */
export interface Averages {
  readonly paidGpuHoursPerHour: number;
  readonly allocatedGpuHoursPerHour: number;
  /** Length of the window actually covered, hours. */
  readonly hours: number;
}

/** Time-averages (GPU-hours per hour) from GPU-milliseconds over a span of milliseconds. */
export function averagesFromTotals(paidGpuMs: number, allocatedGpuMs: number, spanMs: number): Averages {
  if (spanMs <= 0) return { paidGpuHoursPerHour: 0, allocatedGpuHoursPerHour: 0, hours: 0 };
  return {
    paidGpuHoursPerHour: paidGpuMs / spanMs,
    allocatedGpuHoursPerHour: allocatedGpuMs / spanMs,
    hours: spanMs / 3_600_000,
  };
}

/**
 * Paid over allocated GPU-time: node rounding, boot time, release lag and rescales make it above 1.
 * Planning with budget / overhead keeps the paid average at the budget. Clamped, and 1 until there
 * is enough evidence (half an hour of allocated GPU-time).
 */
export function overheadRatio(averages: Averages, min = 1, max = 2): number {
  if (averages.hours < 0.5 || averages.allocatedGpuHoursPerHour <= 0) return 1;
  const ratio = averages.paidGpuHoursPerHour / averages.allocatedGpuHoursPerHour;
  return Math.min(max, Math.max(min, ratio));
}
