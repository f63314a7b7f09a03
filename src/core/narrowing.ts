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

interface Candidate {
  readonly index: number;
  readonly step: Step;
  /**
   * At an equal price (jobs of one class and epoch), what restarts nothing goes first: 0, a running
   * job's step that stays at or above the width it holds; 1, a waiting job's; 2, a running job's below
   * what it holds. Within a tier, the youngest job's first.
   */
  readonly tier: number;
}

function before(a: Candidate, b: Candidate): boolean {
  if (a.step.price !== b.step.price) return a.step.price < b.step.price;
  if (a.tier !== b.tier) return a.tier < b.tier;
  return a.index > b.index;
}

/** A binary heap of the jobs' next steps, the first to take on top. */
class StepHeap {
  readonly #items: Candidate[];
  /** Built whole at once (linear time): one candidate per job. */
  constructor(items: Candidate[]) {
    this.#items = items;
    for (let i = (items.length >> 1) - 1; i >= 0; i--) this.#siftDown(i);
  }
  get top(): Candidate | undefined {
    return this.#items[0];
  }
  /** The top taken: its job's next step in its place, or nothing when it has none. */
  replaceTop(next: Candidate | null): void {
    const items = this.#items;
    if (next !== null) items[0] = next;
    else {
      const last = items.pop() as Candidate;
      if (items.length === 0) return;
      items[0] = last;
    }
    this.#siftDown(0);
  }
  #siftDown(from: number): void {
    const items = this.#items;
    let i = from;
    for (;;) {
      let first = i;
      const left = 2 * i + 1;
      const right = left + 1;
      if (left < items.length && before(items[left] as Candidate, items[first] as Candidate)) first = left;
      if (right < items.length && before(items[right] as Candidate, items[first] as Candidate)) first = right;
      if (first === i) return;
      [items[first], items[i]] = [items[i] as Candidate, items[first] as Candidate];
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
  const candidate = (index: number, width: number): Candidate | null => {
    const { speedups, current } = jobs[index] as NarrowedJob;
    const step = speedups && width > 0 ? nextStepDown(speedups, width) : null;
    if (step === null) return null;
    const tier = current === 0 ? 1 : current <= step.width ? 0 : 2;
    return { index, step, tier };
  };
  const first: Candidate[] = [];
  out.forEach((width, index) => {
    const c = candidate(index, width);
    if (c !== null) first.push(c);
  });
  const heap = new StepHeap(first);
  const taken: Array<{ index: number; from: number; to: number }> = [];
  for (let top = heap.top; total > whole && top !== undefined; top = heap.top) {
    const { index, step } = top;
    const from = out[index] as number;
    out[index] = step.width;
    total -= from - step.width;
    taken.push({ index, from, to: step.width });
    heap.replaceTop(candidate(index, step.width));
  }
  for (let i = taken.length - 1; i >= 0 && total < whole; i--) {
    const { index, from, to } = taken[i] as { index: number; from: number; to: number };
    if (out[index] === to && total + (from - to) <= whole) {
      out[index] = from;
      total += from - to;
    }
  }
  return out;
}
