/**
 * A job the executor places short (fewer GPUs than its width, `shortfall: 'partial'`) beside GPUs that
 * stopping replicas hold would be widened as soon as they end, a grace at most later: for a real job a
 * start and then a restart (checkpoint and reload) where one start would do. Such a job waits for them
 * instead when they give it its whole width (the demo's executor replay: 14 new jobs a run placed so).
 */
import type { NodeTable } from './placement-node-table.ts';
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

/**
 * Takes out of `result` the jobs placed short that the GPUs stopping replicas hold would give their width
 * (waitersForStopping; not for replicas past their SIGKILL time, `overdue`): they wait (noteHeld lists
 * them), and the GPUs they leave are held for this pass, so that the idle fill lends them to no job it
 * would have to narrow again a moment later.
 */
export function holdWaitersForStopping(
  nodes: NodeTable,
  overdue: ReadonlyMap<string, number>,
  unsettled: readonly Unsettled[],
  kept: ReadonlySet<number>,
  result: Map<number, number[]>,
): void {
  const stopping = nodes.stoppingGpus() - nodes.heldGpusOf(overdue);
  if (stopping <= 0) return;
  let spare = stopping;
  for (const n of nodes.freeNodes()) spare += n.gpus;
  for (const [id, slots] of result) if (!kept.has(id)) spare -= slots.length;
  const waiters = waitersForStopping(unsettled, kept, result, spare);
  if (waiters.size === 0) return;
  const reserved = new Map<number, number>();
  for (const id of waiters) {
    for (const n of result.get(id) ?? []) reserved.set(n, (reserved.get(n) ?? 0) + 1);
    result.delete(id);
  }
  nodes.addStopping(reserved);
}

/**
 * Of the jobs a pass left waiting, those the GPUs stopping replicas hold would give their width, with
 * the GPUs left free (in total: the executor may split a job across nodes), set in `held` with the nodes
 * each waits on: those where held and free GPUs make its width, or, on none, every one holding GPUs. A
 * walk over the nodes only when a job waits while stopping replicas hold GPUs.
 */
export function noteHeld(
  nodes: NodeTable,
  waiting: readonly Unsettled[],
  held: Map<number, readonly string[]>,
): void {
  if (waiting.length === 0) return;
  const stopping = nodes.stoppingGpus();
  if (stopping === 0) return;
  let free = 0;
  for (const n of nodes.freeNodes()) free += n.gpus;
  const holding = nodes.stoppingNodes();
  for (const job of waiting) {
    if (job.width > free + stopping) continue;
    const one = holding.filter((h) => h.held + h.free >= job.width);
    held.set(job.id, nodes.ids((one.length > 0 ? one : holding).map((h) => h.n)));
  }
}
