/**
 * A job the executor places short (fewer GPUs than its width, `shortfall: 'partial'`) beside GPUs that
 * stopping replicas hold would be widened as soon as they end, a grace at most later: for a real job a
 * start and then a restart (checkpoint and reload) where one start would do. Such a job waits for them
 * instead when they give it its whole width (the demo's executor replay: 14 new jobs a run placed so).
 */
import { sameSlots, type Unsettled } from './placement-records.ts';

/**
 * The jobs of `result` to leave waiting for stopping replicas' GPUs rather than run short: a job new or
 * growing (a running job narrowed or kept at its width is never stopped to wait) that `result` places
 * short elsewhere than where it runs, when `spare` (the GPUs the pass leaves free plus those stopping
 * replicas hold) minus what jobs ahead of it still lack, plus the GPUs it would have had, make its width.
 * Jobs ahead: every job kept short where it runs (it grows first at the next pass) and every job before it
 * in `unsettled` (priority order) left short or waiting.
 */
export function waitersForStopping(
  unsettled: readonly Unsettled[],
  kept: ReadonlySet<number>,
  result: ReadonlyMap<number, readonly number[]>,
  spare: number,
): Set<number> {
  const waiters = new Set<number>();
  let pool = spare;
  for (const job of unsettled) {
    if (kept.has(job.id) || job.width === 0) continue;
    const slots = result.get(job.id) ?? [];
    if (slots.length > 0 && slots.length < job.width && sameSlots(slots, job.current))
      pool -= job.width - slots.length;
  }
  for (const job of unsettled) {
    if (kept.has(job.id) || job.width === 0) continue;
    const slots = result.get(job.id) ?? [];
    if (slots.length >= job.width || (slots.length > 0 && sameSlots(slots, job.current))) continue;
    const candidate = slots.length > 0 && job.width > job.current.length;
    if (candidate && job.width <= pool + slots.length) waiters.add(job.id);
    // Waiting or short, it lacks the same GPUs (its own go back to the pool when it waits).
    pool -= job.width - slots.length;
  }
  return waiters;
}
