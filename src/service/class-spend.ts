/**
 * Where the budget window's allocated GPU-hours went, by job class: the ledger's samples by class and
 * the interval still open (the GPUs booked since the last sample). They add up to the window's allocated
 * average; GPUs of samples from before classes were kept (migration 0014) are one row of no class.
 */
import type { BoaService } from './service.ts';

const HOUR = 3_600_000;

export interface ClassSpend {
  /** null: samples from before the service kept classes. */
  readonly className: string | null;
  readonly gpuHours: number;
  readonly gpuHoursPerHour: number;
  /** Of the window's allocated GPU-hours, 0 to 1. */
  readonly share: number;
}

function round(value: number, digits = 4): number {
  return Number(value.toFixed(digits));
}

/**
 * Each class's allocated GPU-hours over [from, now], most first, of `allocatedGpuMs` (the window's
 * allocated GPU-milliseconds, the open interval in); none while nothing was allocated.
 */
export function allocatedByClass(
  service: BoaService,
  from: number,
  now: number,
  allocatedGpuMs: number,
): ClassSpend[] {
  const { state, deps } = service;
  const byClass = deps.repo.ledger.allocatedGpuMsByClass(from, now);
  const open = Math.max(0, now - Math.max(from, state.allocatedFrom));
  for (const [className, gpus] of Object.entries(state.allocatedByClass)) {
    byClass.set(className, (byClass.get(className) ?? 0) + gpus * open);
  }
  const classified = [...byClass.values()].reduce((sum, ms) => sum + ms, 0);
  const total = allocatedGpuMs;
  // A GPU-second's rounding is not a row; the GPUs of older samples are.
  const unclassified = total - classified > 1000 ? total - classified : 0;
  const rows: Array<[string | null, number]> = [...byClass.entries()];
  if (unclassified > 0) rows.push([null, unclassified]);
  const spanMs = now - from;
  return rows
    .filter(([, ms]) => ms > 0)
    .sort((a, b) => b[1] - a[1] || String(a[0]).localeCompare(String(b[0])))
    .map(([className, ms]) => ({
      className,
      gpuHours: round(ms / HOUR),
      gpuHoursPerHour: spanMs > 0 ? round(ms / spanMs) : 0,
      share: total > 0 ? round(ms / total, 4) : 0,
    }));
}
