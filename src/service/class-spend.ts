/**
 * Where the budget window's allocated GPU-time went, by job class: the ledger's samples by class and the
 * interval still open (the GPUs booked since the last sample). They add up to the window's allocated
 * GPU-time; GPUs of samples from before classes were kept (migration 0014) are one row of no class.
 */
import type { BoaService } from './service.ts';

export interface ClassGpuTime {
  /** null: samples from before the service kept classes. */
  readonly className: string | null;
  readonly gpuMs: number;
}

/**
 * Each class's allocated GPU-milliseconds over [from, now], most first, of `allocatedGpuMs` (the window's
 * allocated GPU-milliseconds, the open interval in); none while nothing was allocated.
 */
export function allocatedByClass(
  service: BoaService,
  from: number,
  now: number,
  allocatedGpuMs: number,
): ClassGpuTime[] {
  const { state, deps } = service;
  const byClass = deps.repo.ledger.allocatedGpuMsByClass(from, now);
  const open = Math.max(0, now - Math.max(from, state.allocatedFrom));
  for (const [className, gpus] of Object.entries(state.allocatedByClass)) {
    byClass.set(className, (byClass.get(className) ?? 0) + gpus * open);
  }
  const classified = [...byClass.values()].reduce((sum, ms) => sum + ms, 0);
  // A GPU-second's rounding is not a row; the GPUs of older samples are.
  const unclassified = allocatedGpuMs - classified > 1000 ? allocatedGpuMs - classified : 0;
  const rows: ClassGpuTime[] = [...byClass.entries()].map(([className, gpuMs]) => ({ className, gpuMs }));
  if (unclassified > 0) rows.push({ className: null, gpuMs: unclassified });
  return rows
    .filter((r) => r.gpuMs > 0)
    .sort((a, b) => b.gpuMs - a.gpuMs || String(a.className).localeCompare(String(b.className)));
}
