import type { PlacedWidths } from './place.ts';

interface Sized {
  readonly id: number;
  readonly width: number;
  readonly provision: number;
}

/**
 * The widths to size the node group for after placing `wanted`. A job started or resized on fewer GPUs
 * than its width (the ready nodes had no more) keeps that width under the ceiling from the next tick,
 * which reads it in `held`: nodes booted for the rest would be scaled in while they boot, paid for
 * nothing. So after such a placement the widths are decided again, by `widthsFrom` (this tick's
 * ceiling and drain), on the allocations and held widths just placed, as the service decides again
 * after such a tick (service/scheduler.ts).
 */
export function widthsToSize<
  J extends { readonly id: number; readonly state: string; readonly current: readonly number[] },
>(
  planned: readonly J[],
  wanted: readonly Sized[],
  placed: PlacedWidths,
  widthsFrom: (jobs: readonly J[], held: ReadonlyMap<number, number>) => readonly Sized[],
): readonly Sized[] {
  const short = wanted.some((w) => {
    const held = placed.held.get(w.id) ?? 0;
    return held > 0 && held < w.width;
  });
  if (!short) return wanted;
  const placedJobs = planned.map((job) => {
    const current = placed.allocations.get(job.id) ?? [];
    return { ...job, state: current.length > 0 ? 'running' : 'waiting', current };
  });
  return widthsFrom(placedJobs, placed.held);
}
