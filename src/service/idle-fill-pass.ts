/**
 * The idle fill's part of a tick's placement step (its rules are in idle-fill.ts): placing with the GPUs
 * a widened job keeps, giving them back when a job would wait or run short, widening jobs onto idle
 * GPUs, and counting the GPUs lent so the budget control books only the plan's.
 */
import type { ServiceJob } from './jobs.ts';
import type { IncrementalPlacement, Placement } from './placement.ts';
import { estimatedClasses } from './plan-inputs.ts';
import type { PoolNode } from './ports.ts';
import type { BoaService } from './service.ts';
import type { TickUndo } from './tick-undo.ts';
import type { TickWidths } from './tick-widths.ts';
import { fillIdle, fillRuleNow, keptWidth } from './idle-fill.ts';

/**
 * Places the tick's widths (tick-widths.ts) on the ready nodes; with the idle fill on (config.idleFill), a
 * widened job keeps its GPUs unless that leaves a job waiting or short, and idle GPUs are then lent.
 * The result's `changed` holds the fill's moves too. `active`: the active jobs in id order.
 */
export function placeWithIdleFill(
  service: BoaService,
  placement: IncrementalPlacement,
  active: readonly ServiceJob[],
  { widthOf, bounds }: Pick<TickWidths, 'widthOf' | 'bounds'>,
  readyNodes: readonly PoolNode[],
  now: number,
): Placement {
  if (!service.deps.config.idleFill) return placement.place(active, widthOf, readyNodes, bounds);
  const keptOf = (job: ServiceJob) => keptWidth(job, widthOf(job));
  let placed = placement.place(active, widthOf, readyNodes, bounds, keptOf);
  // GPUs the idle fill lent give way when a job would otherwise wait or run short (as in the simulator),
  // but only where that places more of the plan's widths: a growing job that cannot get its whole
  // width keeps its old one, so taking the GPUs back moved the lent jobs (a restart each) for nothing,
  // every tick (found in review). Lent GPUs on keep-only nodes stay: no one else may use them.
  // Only a job lent GPUs keeps a width (keptWidth): the others' widths are not asked for here.
  if (active.some((job) => job.idleFillGpus > 0 && keptOf(job) > 0)) {
    // A job that waits for GPUs stopping replicas hold is placed once they end, kept lent or not: taking
    // the lent GPUs back for it restarted the lender for nothing (idle-fill-waiter-elsewhere.test.ts).
    const short = shortfall(active, widthOf, placed.changed, new Map(placement.heldByStopping));
    if (short > 0) {
      const keepOnly = new Set(readyNodes.filter((node) => node.keepOnly).map((node) => node.id));
      const keptOnKeepOnly = (job: ServiceJob) =>
        job.allocation.length > 0 && job.allocation.every((node) => keepOnly.has(node)) ? keptOf(job) : 0;
      const keepFirst = placement.snapshot();
      const givenBack = placement.place(active, widthOf, readyNodes, bounds, keptOnKeepOnly);
      // A job that waits for the lent replicas' GPUs to be given back (their stop) is placed by it: kept
      // lent, they would never be (narrowed-in-place-gpus.test.ts).
      const waits = placement.heldByStopping;
      if (shortfall(active, widthOf, givenBack.changed, waits) < short) placed = givenBack;
      else keepFirst();
    }
  }
  const classes = () => new Map(estimatedClasses(service).map((c) => [c.name, c]));
  const rule = fillRuleNow(service.deps.config, service.state.lastSubmittedAt, now);
  for (const [id, next] of fillIdle(placement, (id) => jobWithId(active, id), widthOf, classes, now, rule)) {
    if (next === undefined) placed.changed.delete(id);
    else placed.changed.set(id, next);
  }
  return placed;
}

/**
 * The job with id `id` among `jobs` (in id order), by bisection: the idle fill asks for the few jobs beside
 * idle GPUs, and a lookup reads a few jobs' objects rather than all of them.
 */
function jobWithId(jobs: readonly ServiceJob[], id: number): ServiceJob | undefined {
  let low = 0;
  let high = jobs.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const job = jobs[middle] as ServiceJob;
    if (job.id === id) return job;
    if (job.id < id) low = middle + 1;
    else high = middle - 1;
  }
  return undefined;
}

/**
 * GPUs of the jobs' widths not placed (a waiting job's whole width), but for the jobs of `placedOnceStopped`
 * (those waiting for GPUs stopping replicas hold: placed whole once they end).
 */
function shortfall(
  jobs: readonly ServiceJob[],
  widthOf: (job: ServiceJob) => number,
  changed: ReadonlyMap<number, readonly string[]>,
  placedOnceStopped: ReadonlyMap<number, unknown> = new Map(),
): number {
  let short = 0;
  for (const job of jobs) {
    if (placedOnceStopped.has(job.id)) continue;
    short += Math.max(0, widthOf(job) - (changed.get(job.id) ?? job.allocation).length);
  }
  return short;
}

/**
 * Sets each job's `idleFillGpus` to the GPUs it runs on beyond its plan's width after this placement
 * (`changed`, else its allocation), noting in `undo` those that change. They are not booked (the plan's
 * widths are), the job keeps them at the next tick, and they are saved with the tick when they change,
 * so that a restart keeps them too. With the fill off, a job lent GPUs before (stored, the service
 * restarted without the fill) has none lent any more. Returns the GPUs lent in all and the jobs whose
 * count changed (to be saved even where their allocation did not).
 */
export function noteLentGpus(
  jobs: readonly ServiceJob[],
  changed: ReadonlyMap<number, readonly string[]>,
  widthOf: (job: ServiceJob) => number,
  undo: TickUndo,
  fillOn: boolean,
): { lent: number; relent: Set<ServiceJob> } {
  let lent = 0;
  const relent = new Set<ServiceJob>();
  for (const job of jobs) {
    // Fill off: a comparison a job, no lookup (a map lookup a job is a measurable part of the tick).
    const extra = fillOn
      ? Math.max(0, (changed.get(job.id)?.length ?? job.allocation.length) - widthOf(job))
      : 0;
    if (extra !== job.idleFillGpus) {
      undo.note(job);
      job.idleFillGpus = extra;
      relent.add(job);
    }
    lent += extra;
  }
  return { lent, relent };
}
