/**
 * The widths the budget's spend ceiling (spend-ceiling.ts) lets jobs run at, the same in the service and
 * the simulator: narrowed by price, kept to spare restarts, then served in priority order.
 */
import { narrowedColumn, speedupAt } from './narrowing.ts';
import type { SpeedupTable } from './profile.ts';
import { sortByKeyStable } from './stable-key-sort.ts';
import { ReusedColumn } from './reused-column.ts';

// Columns ceilingWidths works on, kept across calls (reused-column.ts); the widths it returns are fresh.
const orderColumn = new ReusedColumn((length) => new Int32Array(length));
const widthsColumn = new ReusedColumn((length) => new Float64Array(length));

/** How the waiting jobs queue for the budget: waitingOrder, or the jobs' (submission) order. */
export const QUEUE_ORDERS = ['least-work-left', 'submitted'] as const;
export type QueueOrder = (typeof QUEUE_ORDERS)[number];

/**
 * A job waiting this long since its submission goes before the others, least work left first or not:
 * one budget window. Shorter bounds gave back what the order gains where the budget is tight
 * (workload-8 at 1.2x its minimum: 1.15x the best other's average JCT, 1.66x with 8 hours, 1.84x with
 * 4); a day changes no point of the comparison and still brings a long job passed over by short ones
 * to the front.
 */
export const DEFAULT_QUEUE_OVERDUE_HOURS = 24;

/**
 * The order waiting jobs are served in: those `overdue` (waited past the queue's bound) first, in the
 * jobs' order (oldest first), then the least expected work left first (`workLeft`, 1-GPU seconds over
 * the class's weight, work-left.ts weightedWorkLeft; ties, and jobs without it, in the jobs' order). The ceiling binds when the budget cannot run every job
 * present, and there the queue's order is what the average JCT turns on: served oldest first, a few
 * long jobs at the front held the short ones behind them for hours (workload-3 at 1.2x its minimum:
 * 3257 s of queueing on average, 2252 s least work first, docs/comparison.md). The bound brings a
 * long job a stream of short ones kept passing to the front; it does not cap its wait (servedWidths'
 * backfill still starts narrower jobs where it does not fit).
 */
export function waitingOrder(running: Flags, workLeft?: ArrayLike<number>, overdue?: Flags): number[] {
  return Array.from(waitingColumn(running, workLeft, overdue));
}

/** waitingOrder as a typed column, kept for the next call: at 20,000 jobs the arrays pushed to were each over 128 KB. */
function waitingColumn(running: Flags, workLeft?: ArrayLike<number>, overdue?: Flags): Int32Array {
  let firstCount = 0;
  let waiting = 0;
  for (let index = 0; index < running.length; index++) {
    if (running[index]) continue;
    waiting++;
    if (overdue?.[index]) firstCount++;
  }
  const order = orderColumn.of(waiting);
  let first = 0;
  let next = firstCount;
  for (let index = 0; index < running.length; index++) {
    if (!running[index]) order[overdue?.[index] ? first++ : next++] = index;
  }
  if (workLeft !== undefined) {
    const left = (index: number) => {
      const work = workLeft[index];
      return work !== undefined && Number.isFinite(work) ? work : Number.POSITIVE_INFINITY;
    };
    // Stable: equal work keeps the jobs' order.
    sortByKeyStable(order.subarray(firstCount), left);
  }
  return order;
}

/**
 * The widths the ceiling lets run, on arrays aligned with the jobs (0: the job waits), in priority
 * order (running jobs keep their place, then the waiting in `order`, waitingOrder's): each is served
 * at its width if it still fits, else it waits for the budget (smaller jobs behind it may start:
 * backfill). A job wider than the whole ceiling would never fit: it is served at the ceiling's width
 * when that much is free, so it cannot starve.
 */
function servedWidths(
  running: Flags,
  widths: ArrayLike<number>,
  gpus: number,
  order: Int32Array,
): Float64Array {
  const whole = Math.floor(gpus + 1e-9);
  const served = new Float64Array(widths.length);
  let left = whole;
  const take = (index: number) => {
    const width = Math.min(widths[index] as number, whole);
    if (width > 0 && width <= left) {
      served[index] = width;
      left -= width;
    }
  };
  for (let i = 0; i < widths.length; i++) if (running[i]) take(i);
  for (const i of order) take(i);
  return served;
}

/** The served jobs and their widths, running jobs first, then the rest, each in the jobs' order. */
function servedMap<J>(
  jobs: readonly J[],
  running: readonly boolean[],
  served: ArrayLike<number>,
): Map<J, number> {
  const map = new Map<J, number>();
  for (const first of [true, false]) {
    jobs.forEach((job, index) => {
      const width = served[index] as number;
      if (running[index] === first && width > 0) map.set(job, width);
    });
  }
  return map;
}

/**
 * A job waiting this long for the budget narrows widths running jobs keep (widthsUnderCeiling): the
 * service's keptWidthWaitMinutes unless set, and the simulator's boa.
 */
export const DEFAULT_LONG_WAIT_SECONDS = 3600;

/** A job as the ceiling sees it: running or not (its widths come from the caller). */
export interface CeilingJob {
  readonly state: string;
}

/**
 * The widths the ceiling allows, the same in the service and the simulator: when the planned widths
 * all fit, they are what jobs get; otherwise jobs are narrowed by price (narrowing.ts: the GPUs that buy
 * the least speed go first, by each job's speedup table for its statistical epoch), then served in
 * priority order (servedWidths: running jobs, then the waiting in waitingOrder's), and a job left out
 * waits. Every change of a running job's width is a
 * restart, so a running job keeps the width it has while that is within its plan and within twice its
 * narrowed width, unless it may now have at least twice as much: the ceiling moves with the window's
 * spend every tick, and narrowed jobs that moved with it restarted over and over (on bursty-960-1 at
 * 1.6x the minimum, when every job was narrowed to one common width: 3669 restarts against 1060 with
 * this rule, and 5% of average JCT). Kept widths give way at once where they would stop another running
 * job, and for a waiting job once it has waited long (`waitedLong`: an hour by default; keptWidthsGiveWay).
 * Not sooner for a waiting job: narrowing
 * them at once was faster in the simulator but with 1.4x-1.9x the restarts and the demo at 40 out of
 * issue 14's band; after an hour it changes nearly nothing there, while in `bench:tick` (a ceiling
 * that binds for good) 100 of 1,000 jobs waited up to 4 hours without it (docs/budget-log.md, "a long wait").
 */
export function widthsUnderCeiling<J extends CeilingJob>(
  jobs: readonly J[],
  plannedWidth: (job: J) => number,
  currentWidth: (job: J) => number,
  gpus: number,
  speedupOf: (job: J) => SpeedupTable | undefined,
  waitedLong: (job: J) => boolean = () => false,
  /** The job's class weight (narrowing.ts); 1 when not given. */
  weightOf?: (job: J) => number,
  /** The queue's order (waitingOrder); the jobs' order when not given. */
  queue?: QueueKeys<J>,
): Map<J, number> {
  const running = jobs.map((job) => job.state === 'running');
  const planned = jobs.map(plannedWidth);
  const whole = Math.floor(gpus + 1e-9);
  const workLeft = queue ? jobs.map((job) => queue.workLeftOf(job) ?? Number.POSITIVE_INFINITY) : undefined;
  const overdue = queue ? jobs.map((job) => queue.overdue(job)) : undefined;
  if (planned.reduce((sum, w) => sum + w, 0) <= whole) {
    const order = waitingColumn(running, workLeft, overdue);
    return servedMap(jobs, running, servedWidths(running, planned, gpus, order));
  }
  const current = jobs.map((job, index) => (running[index] ? currentWidth(job) : 0));
  const tables = jobs.map(speedupOf);
  const weights = weightOf ? jobs.map(weightOf) : undefined;
  const served = ceilingWidths(
    { running, planned, current, tables, weights, workLeft, overdue },
    gpus,
    (index) => waitedLong(jobs[index] as J),
  );
  return servedMap(jobs, running, served);
}

/**
 * widthsUnderCeiling on the jobs' columns (`current`: 0 for a job not running), the widths aligned
 * with them (0: the job waits): the service's tick reads its jobs once into columns, where a map of
 * 1,000 jobs built and read each tick cost as much as the narrowing (bench:tick).
 */
export function ceilingWidths(
  jobs: JobArrays,
  gpus: number,
  waitedLong: (index: number) => boolean,
): Float64Array {
  return ceilingWidthsInOrder(jobs, gpus, waitedLong).widths;
}

/**
 * ceilingWidths, and the order it served the waiting jobs in (their indices, waitingOrder's; a column
 * reused by the next call): the service numbers its queue by it without sorting the queue again (4,312
 * jobs waiting in bench:tick --jobs 10000).
 */
export function ceilingWidthsInOrder(
  jobs: JobArrays,
  gpus: number,
  waitedLong: (index: number) => boolean,
): { readonly widths: Float64Array; readonly order: Int32Array } {
  const { running, planned, current, tables } = jobs;
  const whole = Math.floor(gpus + 1e-9);
  let total = 0;
  for (let index = 0; index < planned.length; index++) total += planned[index] as number;
  const order = waitingColumn(running, jobs.workLeft, jobs.overdue);
  if (total <= whole) return { widths: servedWidths(running, planned, gpus, order), order };
  const narrowed = narrowedColumn({ planned, current, speedups: tables, weights: jobs.weights }, gpus);
  const widths = widthsColumn.of(narrowed.length);
  for (let index = 0; index < narrowed.length; index++) {
    const target = narrowed[index] as number;
    const plan = planned[index] as number;
    const held = current[index] as number;
    const kept = held > 0 && held <= plan && held <= 2 * target && target < 2 * held;
    widths[index] = kept ? held : target;
  }
  keptWidthsGiveWay(running, narrowed, widths, whole, waitedLong);
  fillRemainder(jobs, narrowed, widths, gpus, order);
  return { widths: servedWidths(running, widths, gpus, order), order };
}

/**
 * Widths running jobs keep above their narrowed ones never stop another running job, nor keep a job
 * that has waited long for the budget (`waitedLong`) waiting: the youngest running job goes to its
 * narrowed width first, until the running jobs and the long-waiting ones fit. (Narrowing alone fits
 * them: a kept width that did not would leave a running job out, stopped, with GPUs unused.)
 */
function keptWidthsGiveWay(
  running: Flags,
  narrowed: ArrayLike<number>,
  widths: Float64Array,
  whole: number,
  waitedLong: (index: number) => boolean,
): void {
  let needed = 0;
  for (let index = 0; index < widths.length; index++) {
    if (running[index]) needed += widths[index] as number;
    else if (waitedLong(index)) needed += narrowed[index] as number;
  }
  for (let index = widths.length - 1; index >= 0 && needed > whole; index--) {
    const width = widths[index] as number;
    const target = narrowed[index] as number;
    if (running[index] && width > target) {
      widths[index] = target;
      needed -= width - target;
    }
  }
}

/** Per job, true (or non-zero) or not: a plain array or a typed column. */
type Flags = ArrayLike<boolean> | ArrayLike<number>;

/**
 * The jobs as the ceiling reads them, as arrays aligned with them (typed or plain; `tables` may be
 * longer: its first elements are the jobs').
 */
export interface JobArrays {
  readonly running: Flags;
  readonly planned: ArrayLike<number>;
  readonly current: ArrayLike<number>;
  readonly tables: ArrayLike<SpeedupTable | undefined>;
  /** Each job's class weight (narrowing.ts); 1 for every job when not given. */
  readonly weights?: ArrayLike<number> | undefined;
  /** Expected 1-GPU seconds of work each job has left (waitingOrder); the jobs' order when not given. */
  readonly workLeft?: ArrayLike<number> | undefined;
  /** Waiting jobs past the queue's bound (waitingOrder): served first, oldest first. */
  readonly overdue?: Flags | undefined;
}

/** What the queue orders waiting jobs by, for widthsUnderCeiling (waitingOrder). */
export interface QueueKeys<J> {
  /** Expected 1-GPU seconds of work the job has left; undefined: none known (served after). */
  readonly workLeftOf: (job: J) => number | undefined;
  /** The job has waited past the queue's bound. */
  readonly overdue: (job: J) => boolean;
}

/**
 * Narrowing can leave part of the ceiling unused (a step down may free more than was needed, and
 * taking it back may not fit), and so can the widths running jobs keep. What is left goes, in the
 * waiting jobs' `order`, to waiting jobs (one GPU more each: no restart), then to running jobs whose
 * width changes anyway (up to twice the new width, which the next tick keeps), then to running jobs that
 * it can at least double (a smaller gain is not worth a restart, as in the rule above) within twice their
 * narrowed width (`narrowed`: what the next tick keeps); a width only
 * where its table says it is faster (cifar10's first epoch is slower on 5 GPUs than on 4).
 */
function fillRemainder(
  jobs: JobArrays,
  narrowed: ArrayLike<number>,
  widths: Float64Array,
  gpus: number,
  order: Int32Array,
): void {
  const { running, planned, current, tables } = jobs;
  const faster = (index: number, from: number, to: number) => {
    const table = tables[index];
    return table === undefined || speedupAt(table, to) > speedupAt(table, from);
  };
  let left = Math.floor(gpus + 1e-9);
  for (let index = 0; index < widths.length; index++) left -= widths[index] as number;
  for (const i of order) {
    if (left <= 0) break;
    const width = widths[i] as number;
    if (width > 0 && width < (planned[i] as number) && faster(i, width, width + 1)) {
      widths[i] = width + 1;
      left -= 1;
    }
  }
  // A running job narrowed (or widened) past what it keeps restarts this tick anyway: it takes what is
  // left at once, up to twice its new width (what the next tick keeps). Left to the next tick's doubling,
  // a job cut from 4 GPUs to 1 with a GPU over ran one tick on 1 and restarted again on 2 (found by a
  // colleague: cifar10 after a budget cut, and after a restart of the service).
  for (let i = 0; i < widths.length && left > 0; i++) {
    const width = widths[i] as number;
    const held = current[i] as number;
    if (!running[i] || held <= 0 || width <= 0 || width === held) continue;
    const most = Math.min(planned[i] as number, 2 * width, width + left);
    const wider = fastestWithin(tables[i], width, most);
    if (wider !== undefined) {
      widths[i] = wider;
      left -= wider - width;
    }
  }
  for (let i = 0; i < widths.length && left > 0; i++) {
    const width = widths[i] as number;
    const held = current[i] as number;
    if (!running[i] || width !== held || held <= 0) continue;
    // At most twice its narrowed width, which the next tick keeps: doubled past it, cifar10 held on 5 under
    // 12 GPUs ran one tick on 10 and was narrowed back to 4 at the next (a restart each way).
    const most = Math.min(planned[i] as number, held + left, 2 * (narrowed[i] as number));
    const doubled = atLeastDoubled(tables[i], held, most);
    if (doubled !== undefined && faster(i, held, doubled)) {
      widths[i] = doubled;
      left -= doubled - width;
    }
  }
}

/**
 * The fastest width above `from` and at most `most` (the narrowest of equals) where it is faster than
 * `from`; listed widths only (an unlisted one runs as the listed one below it). Without a table, `most`.
 */
function fastestWithin(table: SpeedupTable | undefined, from: number, most: number): number | undefined {
  if (most <= from) return undefined;
  if (table === undefined) return most;
  let best: number | undefined;
  let bestSpeedup = speedupAt(table, from);
  for (const width of ascendingWidths(table)) {
    if (width > most) break;
    if (width <= from) continue;
    const speedup = speedupAt(table, width);
    if (speedup > bestSpeedup) {
      best = width;
      bestSpeedup = speedup;
    }
  }
  return best;
}

/**
 * The narrowest width of at least twice `held` and at most `most` that the job's table lists: an
 * unlisted one runs as fast as the listed width below it (found in review: bert held 9 was given 18,
 * which runs as 16 does, two GPUs paid for nothing). Without a table, twice `held`.
 */
function atLeastDoubled(table: SpeedupTable | undefined, held: number, most: number): number | undefined {
  if (2 * held > most) return undefined; // most ticks: too little left to double anyone
  if (table === undefined) return 2 * held;
  for (const width of ascendingWidths(table)) {
    if (width > most) return undefined;
    if (width >= 2 * held) return width;
  }
  return undefined;
}

/** A table's listed widths in ascending order, once per table: parsing its keys every tick cost 0.15 ms. */
const widthsOfTable = new WeakMap<SpeedupTable, readonly number[]>();

function ascendingWidths(table: SpeedupTable): readonly number[] {
  let widths = widthsOfTable.get(table);
  if (widths === undefined) {
    widths = Object.keys(table)
      .map(Number)
      .sort((a, b) => a - b);
    widthsOfTable.set(table, widths);
  }
  return widths;
}
