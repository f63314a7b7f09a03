/**
 * The idle fill in the service (core/exec/idle-fill.ts, the simulator's rule too): after the plan's
 * widths are placed, a job on one node is widened onto that node's idle GPUs where its profile says the
 * speedup repays the restart. The node is paid whole anyway, so the plan, the node count and the
 * allocation the budget control books stay the plan's (`ServiceJob.idleFillGpus` are left out of it).
 * A widened job keeps its GPUs across ticks (`keptWidth`) until a job would wait or run short for them.
 */
import { DEFAULT_FILL, fillIdleGpus, type FillCandidate } from '../core/exec/idle-fill.ts';
import type { ClassProfile } from '../core/profile.ts';
import { progressOf } from './drain.ts';
import type { ServiceJob } from './jobs.ts';
import type { IncrementalPlacement } from './placement.ts';

/**
 * GPUs lent on each node (a filled job runs on one node). A node's load for choosing what to remove is
 * what it runs for the plan: a node with one job widened 1 -> 4 is not fuller than one running two jobs.
 */
export function lentGpusByNode(jobs: Iterable<ServiceJob>): Map<string, number> {
  const lent = new Map<string, number>();
  for (const job of jobs) {
    const extra = job.idleFillGpus;
    const node = job.allocation[0];
    if (extra > 0 && node !== undefined) lent.set(node, (lent.get(node) ?? 0) + extra);
  }
  return lent;
}

/** GPUs placed on a node less those lent there; a node with a job counts at least 1. */
export function bookedGpusOn(
  placedOn: (node: string) => number,
  jobs: Iterable<ServiceJob>,
): (node: string) => number {
  const lent = lentGpusByNode(jobs);
  return (node) => {
    const placed = placedOn(node);
    return placed > 0 ? Math.max(1, placed - (lent.get(node) ?? 0)) : 0;
  };
}

/** The width a job widened by the fill keeps while it runs at it and its plan is narrower; 0: none. */
export function keptWidth(job: ServiceJob, width: number): number {
  const extra = job.idleFillGpus;
  const kept = job.allocation.length;
  return extra > 0 && width > 0 && kept > width ? kept : 0;
}

/**
 * Widens the jobs the last placement pass left on one node with idle GPUs. Returns the jobs it moved
 * with their new allocations (undefined: back to the one they run with). `widthOf`: the plan's widths;
 * a job placed short of it is not widened.
 */
export function fillIdle(
  placement: IncrementalPlacement,
  jobs: readonly ServiceJob[],
  widthOf: (job: ServiceJob) => number,
  classesNow: () => ReadonlyMap<string, ClassProfile>,
  now: number,
): Map<number, readonly string[] | undefined> {
  const moved = new Map<number, readonly string[] | undefined>();
  const free = placement.freeGpus();
  if (free.size === 0) return moved;
  // The profiles in use (learned speedups included), read only on ticks with an idle GPU.
  const classes = classesNow();
  // Only the nodes with idle GPUs, each counted as its idle GPUs plus those of the jobs taken in:
  // the core then finds exactly the idle ones.
  const allocations = new Map<number, readonly number[]>();
  const ready = new Map(free);
  const candidates: FillCandidate[] = [];
  for (const job of jobs) {
    const slots = placement.slotsOf(job.id);
    if (slots === undefined || slots.length === 0 || slots.length < widthOf(job)) continue;
    const node = slots[0] as number;
    if (!free.has(node) || slots.some((n) => n !== node)) continue;
    const cls = classes.get(job.className);
    if (cls === undefined) continue;
    allocations.set(job.id, slots);
    ready.set(node, (ready.get(node) as number) + slots.length);
    candidates.push({
      id: job.id,
      app: job.className,
      statEpoch: job.statEpoch,
      progressFraction: progressOf(job, cls.epochs),
      // The service does not see a restart end: a job is taken as restarting for its class's rescale
      // time from the allocation it was given (a second restart would waste the first).
      restarting: job.generationSince !== null && now - job.generationSince < cls.rescaleSeconds * 1000,
    });
  }
  if (candidates.length === 0) return moved;
  const filled = fillIdleGpus(allocations, ready, candidates, classes, DEFAULT_FILL);
  for (const job of jobs) {
    const before = allocations.get(job.id);
    const after = filled.get(job.id);
    if (before === undefined || after === undefined || after.length === before.length) continue;
    moved.set(job.id, placement.moveTo(job.id, after, job.allocation));
  }
  return moved;
}
