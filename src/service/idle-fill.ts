/**
 * The idle fill in the service (core/exec/idle-fill.ts, the simulator's rule too): after the plan's
 * widths are placed, a job on one node is widened onto that node's idle GPUs where its profile says the
 * speedup repays the restart. The node is paid whole anyway, so the plan, the node count and the
 * allocation the budget control books stay the plan's (`ServiceJob.idleFillGpus` are left out of it).
 * A widened job keeps its GPUs across ticks (`keptWidth`) until a job would wait or run short for them.
 * Once nothing has been submitted for the drain's hours, the rule is by time saved and a job on several
 * nodes takes its nodes' idle GPUs too (`quietFillSavedRestarts`, the simulator's default as well).
 */
import { DEFAULT_FILL, fillIdleGpus, type FillCandidate, type FillOptions } from '../core/exec/idle-fill.ts';
import type { ClassProfile } from '../core/profile.ts';
import { progressOf, submissionsStopped } from './drain.ts';
import type { ServiceJob } from './jobs.ts';
import type { IncrementalPlacement } from './placement.ts';

/** The fill's rule now: by time saved, jobs on several nodes too, once submissions have stopped. */
export function fillRuleNow(
  config: { readonly drainAfterHours: number; readonly quietFillSavedRestarts: number },
  lastSubmittedAt: number | undefined,
  now: number,
): FillOptions {
  const saved = config.quietFillSavedRestarts;
  return saved > 0 && submissionsStopped(config.drainAfterHours, lastSubmittedAt, now)
    ? { ...DEFAULT_FILL, minSavedRestarts: saved }
    : DEFAULT_FILL;
}

/**
 * GPUs lent on each node. A node's load for choosing what to remove is what it runs for the plan: a
 * node with one job widened 1 -> 4 is not fuller than one running two jobs. Which of a multi-node job's
 * nodes lent is not kept (only how many): they are charged to the nodes holding most of the job first,
 * at least one of its GPUs left on each, which can rank such a node wrongly for removal (the core lends
 * from its nodes with the fewest idle GPUs first); a node with a job never counts as empty.
 */
export function lentGpusByNode(jobs: Iterable<ServiceJob>): Map<string, number> {
  const lent = new Map<string, number>();
  for (const job of jobs) {
    let extra = job.idleFillGpus;
    if (extra <= 0) continue;
    const held = new Map<string, number>();
    for (const node of job.allocation) held.set(node, (held.get(node) ?? 0) + 1);
    const most = [...held].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    for (const [node, count] of most) {
      const take = Math.min(extra, count - 1);
      if (take > 0) lent.set(node, (lent.get(node) ?? 0) + take);
      extra -= take;
    }
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
 * Widens the jobs the last placement pass left beside idle GPUs of their nodes (on one node unless the
 * rule is by time saved). Returns the jobs it moved with their new allocations (undefined: back to the
 * one they run with). `jobOf`: the placed jobs by id; `widthOf`: the plan's widths; a job placed short
 * of it is not widened.
 */
export function fillIdle(
  placement: IncrementalPlacement,
  jobOf: (id: number) => ServiceJob | undefined,
  widthOf: (job: ServiceJob) => number,
  classesNow: () => ReadonlyMap<string, ClassProfile>,
  now: number,
  rule: FillOptions = DEFAULT_FILL,
): Map<number, readonly string[] | undefined> {
  const moved = new Map<number, readonly string[] | undefined>();
  const free = placement.freeGpus();
  if (free.size === 0) return moved;
  // The profiles in use (learned speedups included), read only on ticks with an idle GPU.
  const classes = classesNow();
  const severalNodes = rule.minSavedRestarts !== undefined;
  // The nodes with idle GPUs, and those of the jobs taken in, each counted as its idle GPUs plus those
  // of the jobs taken in: the core then finds exactly the idle ones (none on a node not in `free`).
  const allocations = new Map<number, readonly number[]>();
  const ready = new Map(free);
  const candidates: FillCandidate[] = [];
  // The candidates' jobs, in id order: only they are looked at once the core has filled.
  const taken: ServiceJob[] = [];
  for (const id of placement.jobsOn(free.keys())) {
    const job = jobOf(id);
    const slots = placement.slotsOf(id);
    if (job === undefined || slots === undefined || slots.length < widthOf(job)) continue;
    if (!severalNodes && !onOneNode(slots)) continue;
    const cls = classes.get(job.className);
    if (cls === undefined) continue;
    allocations.set(job.id, slots);
    taken.push(job);
    for (const n of slots) ready.set(n, (ready.get(n) ?? 0) + 1);
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
  const filled = fillIdleGpus(allocations, ready, candidates, classes, rule);
  for (const job of taken) {
    const before = allocations.get(job.id);
    const after = filled.get(job.id);
    if (before === undefined || after === undefined || after.length === before.length) continue;
    moved.set(job.id, placement.moveTo(job.id, after, job.allocation));
  }
  return moved;
}

/** Every slot on the first one's node. */
function onOneNode(slots: readonly number[]): boolean {
  for (const n of slots) if (n !== slots[0]) return false;
  return true;
}
