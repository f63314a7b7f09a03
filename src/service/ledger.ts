/**
 * The budget ledger: paid GPU-time from the nodes that really ran (from their launch times), allocated
 * GPU-time from the jobs' allocations, both as time-averages (GPU-hours per hour) over a window.
 */
export interface NodeInterval {
  readonly gpus: number;
  readonly launchedAt: number;
  /** When it was last seen, or when it was found gone. */
  readonly until: number;
}

export interface AllocationInterval {
  readonly from: number;
  readonly to: number;
  readonly gpus: number;
}

function overlap(a0: number, a1: number, b0: number, b1: number): number {
  return Math.max(0, Math.min(a1, b1) - Math.max(a0, b0));
}

export interface Averages {
  readonly paidGpuHoursPerHour: number;
  readonly allocatedGpuHoursPerHour: number;
  /** Length of the window actually covered, hours. */
  readonly hours: number;
}

/** Time-averages over [from, to]; an empty window averages to zero. */
export function averagesOver(
  nodes: readonly NodeInterval[],
  allocations: readonly AllocationInterval[],
  from: number,
  to: number,
): Averages {
  const span = to - from;
  if (span <= 0) return { paidGpuHoursPerHour: 0, allocatedGpuHoursPerHour: 0, hours: 0 };
  let paid = 0;
  for (const n of nodes) paid += n.gpus * overlap(n.launchedAt, n.until, from, to);
  let allocated = 0;
  for (const a of allocations) allocated += a.gpus * overlap(a.from, a.to, from, to);
  return {
    paidGpuHoursPerHour: paid / span,
    allocatedGpuHoursPerHour: allocated / span,
    hours: span / 3_600_000,
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
