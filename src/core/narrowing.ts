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
 * sets. The price does not depend on the job's size. A common width for every job (the rule before)
 * takes as much from a job whose GPUs scale well as from one whose GPUs add almost nothing: at a burst
 * on workload-3 it gave bert (4 GPUs: 4.1x) and yolov3 (4 GPUs: 1.7x) about 2 GPUs each.
 */

import { type SpeedupTable, speedupUpTo } from './profile.ts';

interface Step {
  readonly width: number;
  readonly price: number;
}

/**
 * A job's speedup on `width` GPUs: the measured one at a listed width (not the best below it: a job on
 * a width where the measurement dips runs that slowly), the best listed width below an unlisted one.
 */
export function speedupAt(table: SpeedupTable, width: number): number {
  return table[String(width)] ?? speedupUpTo(table, width);
}

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

/** A job as narrowing sees it: its planned width, the width it runs on (0: waiting), its table. */
export interface NarrowedJob {
  readonly planned: number;
  readonly current: number;
  readonly speedups: SpeedupTable | undefined;
}

/**
 * The jobs' next steps as a binary heap of job indices, the first to take on top. Each job's step and
 * tie tier sit in flat arrays (no object per step: a binding ceiling over 1,000 jobs takes about 3,000
 * steps a tick). At an equal price (jobs of one class and epoch), what restarts nothing goes first:
 * tier 0, a running job's step that stays at or above the width it holds; 1, a waiting job's; 2, a
 * running job's below what it holds. Within a tier, the youngest job's first.
 */
class StepHeap {
  readonly #heap: Int32Array;
  #size = 0;
  readonly #price: Float64Array;
  readonly #width: Int32Array;
  readonly #tier: Uint8Array;

  constructor(jobs: number) {
    this.#heap = new Int32Array(jobs);
    this.#price = new Float64Array(jobs);
    this.#width = new Int32Array(jobs);
    this.#tier = new Uint8Array(jobs);
  }
  /** Sets a job's step before the heap is built. */
  add(index: number, step: Step, tier: number): void {
    this.#set(index, step, tier);
    this.#heap[this.#size++] = index;
  }
  /** Builds the heap from what was added, at once (linear time). */
  build(): void {
    for (let i = (this.#size >> 1) - 1; i >= 0; i--) this.#siftDown(i);
  }
  get empty(): boolean {
    return this.#size === 0;
  }
  get topIndex(): number {
    return this.#heap[0] as number;
  }
  get topWidth(): number {
    return this.#width[this.#heap[0] as number] as number;
  }
  /** The top job's next step in its place, or (null) the job leaves the heap. */
  replaceTop(step: Step | null, tier: number): void {
    if (step !== null) this.#set(this.#heap[0] as number, step, tier);
    else {
      this.#size -= 1;
      if (this.#size === 0) return;
      this.#heap[0] = this.#heap[this.#size] as number;
    }
    this.#siftDown(0);
  }
  #set(index: number, step: Step, tier: number): void {
    this.#price[index] = step.price;
    this.#width[index] = step.width;
    this.#tier[index] = tier;
  }
  #before(a: number, b: number): boolean {
    const pa = this.#price[a] as number;
    const pb = this.#price[b] as number;
    if (pa !== pb) return pa < pb;
    const ta = this.#tier[a] as number;
    const tb = this.#tier[b] as number;
    if (ta !== tb) return ta < tb;
    return a > b;
  }
  #siftDown(from: number): void {
    const heap = this.#heap;
    const size = this.#size;
    let i = from;
    for (;;) {
      let first = i;
      const left = 2 * i + 1;
      const right = left + 1;
      if (left < size && this.#before(heap[left] as number, heap[first] as number)) first = left;
      if (right < size && this.#before(heap[right] as number, heap[first] as number)) first = right;
      if (first === i) return;
      const swap = heap[first] as number;
      heap[first] = heap[i] as number;
      heap[i] = swap;
      i = first;
    }
  }
}

/**
 * Widths within `gpus`: from the planned widths, the cheapest steps down first until they fit, then
 * the dearest steps taken back while what they free still fits (a last step may free more than was
 * needed). When even every job at its narrowest does not fit, that is what is returned: the caller
 * queues the jobs beyond the ceiling. A job without a table keeps its width.
 */
export function narrowedByPrice(jobs: readonly NarrowedJob[], gpus: number): number[] {
  const whole = Math.floor(gpus + 1e-9);
  const out = jobs.map((job) => job.planned);
  let total = out.reduce((sum, w) => sum + w, 0);
  if (total <= whole) return out;
  const stepFrom = (index: number, width: number): Step | null => {
    const { speedups } = jobs[index] as NarrowedJob;
    return speedups && width > 0 ? nextStepDown(speedups, width) : null;
  };
  const tierOf = (index: number, step: Step): number => {
    const { current } = jobs[index] as NarrowedJob;
    return current === 0 ? 1 : current <= step.width ? 0 : 2;
  };
  const heap = new StepHeap(jobs.length);
  out.forEach((width, index) => {
    const step = stepFrom(index, width);
    if (step !== null) heap.add(index, step, tierOf(index, step));
  });
  heap.build();
  // Steps taken, as (job, from, to) triplets, so the dearest can be taken back.
  const taken: number[] = [];
  while (total > whole && !heap.empty) {
    const index = heap.topIndex;
    const to = heap.topWidth;
    const from = out[index] as number;
    out[index] = to;
    total -= from - to;
    taken.push(index, from, to);
    const next = stepFrom(index, to);
    heap.replaceTop(next, next === null ? 0 : tierOf(index, next));
  }
  for (let i = taken.length - 3; i >= 0 && total < whole; i -= 3) {
    const index = taken[i] as number;
    const from = taken[i + 1] as number;
    const to = taken[i + 2] as number;
    if (out[index] === to && total + (from - to) <= whole) {
      out[index] = from;
      total += from - to;
    }
  }
  return out;
}
