/**
 * Narrowing by price: when the planned widths do not fit under the spend ceiling, the GPUs taken back
 * first are those that buy the least speed. BOA gives a job in a statistical epoch the width that
 * minimises JCT + mu x GPU-time (docs/model.md); a tighter budget is a higher price mu. Narrowing a
 * job from width b to a narrower a pays off once
 *
 *     mu >= (s(b) - s(a)) / (b x s(a) - a x s(b))
 *
 * (equal cost per unit of work: (1 + mu x a) / s(a) = (1 + mu x b) / s(b)), so each job's next step
 * down has a price, and stepping down the cheapest first is BOA's own rule at the price the ceiling
 * sets. A class weighted w (its profile's `weight`: its JCT counts w times) has w times that price,
 * as BOA's own cost (w + mu x a) / s(a) gives (found in review: unweighted, a class weighted 10 was
 * narrowed before one weighted 1 that lost 7.5x less for it). The price does not depend on the job's size. A common width for every job (the rule before)
 * takes as much from a job whose GPUs scale well as from one whose GPUs add almost nothing: at a burst
 * on workload-3 it gave bert (4 GPUs: 4.1x) and yolov3 (4 GPUs: 1.7x) about 2 GPUs each.
 */

import { type SpeedupTable, speedupAt } from './profile.ts';
import { StepHeap, type StepTables, stepTables } from './narrowing-steps.ts';
import { ReusedColumn } from './reused-column.ts';

interface Step {
  readonly width: number;
  readonly price: number;
}

export { speedupAt };

// Widths narrowedColumn works on, kept across calls (reused-column.ts): each fresh, a tick allocated
// several typed arrays of every job, and their memory outside the heap brought on full collections.
const belowColumn = new ReusedColumn((length) => new Float64Array(length));
const steppedColumn = new ReusedColumn((length) => new Float64Array(length));
const replayColumn = new ReusedColumn((length) => new Float64Array(length));

/** Steps already found, per table (the profiles' own objects, the same every tick) and width. */
const stepsFound = new WeakMap<SpeedupTable, Map<number, Step | null>>();

/** The job's cheapest step down from `width` (the narrower width reached at the lowest price). */
export function nextStepDown(table: SpeedupTable, width: number): Step | null {
  let found = stepsFound.get(table);
  if (found === undefined) stepsFound.set(table, (found = new Map()));
  let step = found.get(width);
  if (step === undefined) found.set(width, (step = cheapestStepDown(table, width)));
  return step;
}

function cheapestStepDown(table: SpeedupTable, width: number): Step | null {
  const at = speedupAt(table, width);
  let next: Step | null = null;
  for (const [key, speedup] of Object.entries(table)) {
    const narrower = Number(key);
    if (!(narrower < width)) continue;
    const perUnitWork = width * speedup - narrower * at;
    // A narrower width as fast or faster costs nothing to take. One no more efficient per GPU (measured
    // speedups are at times above linear) is the last resort, when nothing else fits.
    const price =
      speedup >= at
        ? Number.NEGATIVE_INFINITY
        : perUnitWork > 0
          ? (at - speedup) / perUnitWork
          : Number.POSITIVE_INFINITY;
    if (next === null || price < next.price || (price === next.price && narrower > next.width)) {
      next = { width: narrower, price };
    }
  }
  return next;
}

/**
 * The jobs as narrowing sees them, one array per field, aligned by job: the planned width, the width
 * it runs on (0: waiting), its table. Arrays the caller has already, not an object per job: in a tick
 * that makes 1,000 objects cost more than the narrowing (bench:tick).
 */
export interface NarrowedJobs {
  readonly planned: ArrayLike<number>;
  readonly current: ArrayLike<number>;
  readonly speedups: ArrayLike<SpeedupTable | undefined>;
  /** Each job's class weight (default 1 for every job). */
  readonly weights?: ArrayLike<number> | undefined;
}

/**
 * Widths within `gpus`: from the planned widths, the cheapest steps down first until they fit, then
 * the dearest steps taken back while what they free still fits (a last step may free more than was
 * needed). When even every job at its narrowest does not fit, that is what is returned: the caller
 * queues the jobs beyond the ceiling. A job without a table keeps its width.
 *
 * Taken one at a time through a heap, the steps of a binding ceiling over 1,000 jobs number in the
 * thousands a tick. A job's k-th step is taken once the price reaches the dearest of its first k (a
 * cheaper step after a dear one follows it at once), so jobs of one table and planned width share a
 * chain of such levels, and the chains alone give the clearing level, the lowest at which the widths
 * fit. Every step below it is taken at once; the heap orders only the clearing level's steps, and,
 * when taking those back leaves GPUs over, the levels below it, one at a time, dearest first, each
 * replayed in the order the heap took it. The result is the one-step-at-a-time result (the test
 * compares them).
 */
export function narrowedByPrice(jobs: NarrowedJobs, gpus: number): number[] {
  return Array.from(narrowedColumn(jobs, gpus));
}

/**
 * narrowedByPrice as a typed column, for the tick: at 20,000 jobs each plain array of widths was over
 * V8's 128 KB limit for regular objects, allocated in large-object space (core/reused-column.ts).
 */
export function narrowedColumn(jobs: NarrowedJobs, gpus: number): Float64Array {
  // The widths returned are a column kept for the next call: read before narrowing again.
  const whole = Math.floor(gpus + 1e-9);
  const { planned } = jobs;
  const total = sumOf(planned);
  if (total <= whole) return Float64Array.from(planned);
  const tables = stepTables(jobs, nextStepDown);
  const chains = chainsOf(tables, planned);
  const clearing = clearingLevel(chains, total, whole);
  // No level at which the widths fit: every job on its narrowest, the rest for the caller to queue.
  const count = planned.length;
  if (clearing === null) return widthsBelow(chains, planned, null, belowColumn.of(count));
  const start = widthsBelow(chains, planned, clearing, belowColumn.of(count));
  const stepped = stepDown(jobs, tables, start, whole, Number.POSITIVE_INFINITY, steppedColumn.of(count));
  takeBack(stepped, stepped.taken, whole);
  for (const level of levelsBelow(chains, clearing)) {
    if (stepped.total >= whole) break;
    const replay = stepDown(
      jobs,
      tables,
      widthsBelow(chains, planned, level, belowColumn.of(count)),
      Number.NEGATIVE_INFINITY,
      level,
      replayColumn.of(count),
    );
    takeBack(stepped, replay.taken, whole);
  }
  return stepped.widths;
}

/**
 * The price the ceiling sets (seconds of JCT per GPU-second, BOA's multiplier): the level of the
 * dearest step narrowedByPrice takes to fit the widths within `gpus`, the clearing level. null when the
 * planned widths fit, or when only free steps (a narrower width as fast) are needed; when even every job
 * at its narrowest does not fit, the dearest level there is. Levels of steps no more efficient per GPU
 * (an infinite price) are not a price: the dearest finite level at or below is returned.
 */
export function clearingPrice(jobs: NarrowedJobs, gpus: number): number | null {
  const whole = Math.floor(gpus + 1e-9);
  const total = sumOf(jobs.planned);
  if (total <= whole) return null;
  const chains = chainsOf(stepTables(jobs, nextStepDown), jobs.planned);
  const clearing = clearingLevel(chains, total, whole) ?? Number.POSITIVE_INFINITY;
  let price: number | null = null;
  for (const chain of chains.chains)
    for (const step of chain.steps)
      if (step.level <= clearing && Number.isFinite(step.level) && step.level > (price ?? 0))
        price = step.level;
  return price;
}

/** The one-step-at-a-time rule narrowedByPrice reproduces, for its test. */
export function narrowedStepwise(jobs: NarrowedJobs, gpus: number): number[] {
  const whole = Math.floor(gpus + 1e-9);
  const { planned } = jobs;
  if (sumOf(planned) <= whole) return Array.from(planned);
  const stepped = stepDown(
    jobs,
    stepTables(jobs, nextStepDown),
    planned,
    whole,
    Number.POSITIVE_INFINITY,
    new Float64Array(planned.length),
  );
  takeBack(stepped, stepped.taken, whole);
  return Array.from(stepped.widths);
}

function sumOf(widths: ArrayLike<number>): number {
  let sum = 0;
  for (let index = 0; index < widths.length; index++) sum += widths[index] as number;
  return sum;
}

/** Jobs of one table and planned width, and the levels (the dearest price so far) of their steps. */
interface Chain {
  readonly jobs: number;
  readonly steps: { readonly level: number; readonly freed: number; readonly to: number }[];
}

interface Chains {
  readonly chainOf: Int32Array;
  readonly chains: readonly Chain[];
}

function chainsOf({ slotOf, base, to, price }: StepTables, planned: ArrayLike<number>): Chains {
  const chainOf = new Int32Array(planned.length).fill(-1);
  const byKey = new Map<number, number>();
  const chains: { jobs: number; steps: Chain['steps'] }[] = [];
  for (let index = 0; index < planned.length; index++) {
    const width = planned[index] as number;
    const slot = slotOf[index] as number;
    if (slot < 0) continue;
    const key = width * base.length + slot;
    let chain = byKey.get(key);
    if (chain === undefined) {
      const steps: { level: number; freed: number; to: number }[] = [];
      let level = Number.NEGATIVE_INFINITY;
      for (let w = width, at = (base[slot] as number) + w; w > 0 && (to[at] as number) >= 0;) {
        level = Math.max(level, price[at] as number);
        const next = to[at] as number;
        steps.push({ level, freed: w - next, to: next });
        w = next;
        at = (base[slot] as number) + w;
      }
      byKey.set(key, (chain = chains.push({ jobs: 0, steps }) - 1));
    }
    (chains[chain] as { jobs: number }).jobs += 1;
    chainOf[index] = chain;
  }
  return { chainOf, chains };
}

/** The lowest level at which, every step up to it taken, the widths fit (null: none does). */
function clearingLevel({ chains }: Chains, total: number, whole: number): number | null {
  const freedAt = new Map<number, number>();
  for (const chain of chains)
    for (const step of chain.steps)
      freedAt.set(step.level, (freedAt.get(step.level) ?? 0) + chain.jobs * step.freed);
  let left = total;
  for (const level of [...freedAt.keys()].sort((a, b) => a - b)) {
    left -= freedAt.get(level) as number;
    if (left <= whole) return level;
  }
  return null;
}

/** The levels with steps below `level`, dearest first. */
function levelsBelow({ chains }: Chains, level: number): number[] {
  const levels = new Set<number>();
  for (const chain of chains) for (const step of chain.steps) if (step.level < level) levels.add(step.level);
  return [...levels].sort((a, b) => b - a);
}

/** Each job's width once every step of a level below `level` is taken (null: every step), into `widths`. */
function widthsBelow(
  { chainOf, chains }: Chains,
  planned: ArrayLike<number>,
  level: number | null,
  widths: Float64Array,
): Float64Array {
  const widthOf = chains.map((chain) => {
    let width = -1;
    for (const step of chain.steps) {
      if (level !== null && step.level >= level) break;
      width = step.to;
    }
    return width;
  });
  for (let index = 0; index < planned.length; index++) {
    const chain = chainOf[index] as number;
    const below = chain < 0 ? -1 : (widthOf[chain] as number);
    widths[index] = below < 0 ? (planned[index] as number) : below;
  }
  return widths;
}

interface Stepped {
  readonly widths: Float64Array;
  total: number;
  /** Steps taken, as (job, from, to) triplets, so the dearest can be taken back. */
  readonly taken: number[];
}

/**
 * From `start`, the cheapest next step first (StepHeap's order) while the widths do not fit and the
 * cheapest step's price is at most `lastPrice`; the widths in `into`.
 */
function stepDown(
  { current }: NarrowedJobs,
  { slotOf, base, to, price }: StepTables,
  start: ArrayLike<number>,
  whole: number,
  lastPrice: number,
  into: Float64Array,
): Stepped {
  const widths = into;
  widths.set(start);
  let total = sumOf(widths);
  const heap = new StepHeap(start.length);
  // Each job's next step: its position in the step tables (-1: none).
  const stepAt = (index: number, width: number): number => {
    const slot = slotOf[index] as number;
    if (slot < 0 || width <= 0) return -1;
    const at = (base[slot] as number) + width;
    return (to[at] as number) < 0 ? -1 : at;
  };
  const tieOf = (index: number, at: number): number => {
    const held = current[index] as number;
    const tier = held === 0 ? 1 : held <= (to[at] as number) ? 0 : 2;
    return heap.tie(index, tier);
  };
  const pending = new Int32Array(start.length);
  for (let index = 0; index < widths.length; index++) {
    const at = stepAt(index, widths[index] as number);
    if (at < 0) continue;
    pending[index] = at;
    heap.add(price[at] as number, tieOf(index, at));
  }
  heap.build();
  const taken: number[] = [];
  while (total > whole && !heap.empty && heap.topPrice <= lastPrice) {
    const index = heap.topIndex;
    const from = widths[index] as number;
    const width = to[pending[index] as number] as number;
    widths[index] = width;
    total -= from - width;
    taken.push(index, from, width);
    const at = stepAt(index, width);
    if (at >= 0) pending[index] = at;
    heap.replaceTop(at < 0 ? null : (price[at] as number), at < 0 ? 0 : tieOf(index, at));
  }
  return { widths, total, taken };
}

/** `taken`'s steps taken back from `stepped`, last taken first, while what each frees still fits. */
function takeBack(stepped: Stepped, taken: readonly number[], whole: number): void {
  const { widths } = stepped;
  for (let i = taken.length - 3; i >= 0 && stepped.total < whole; i -= 3) {
    const index = taken[i] as number;
    const from = taken[i + 1] as number;
    const to = taken[i + 2] as number;
    if (widths[index] === to && stepped.total + (from - to) <= whole) {
      widths[index] = from;
      stepped.total += from - to;
    }
  }
}
