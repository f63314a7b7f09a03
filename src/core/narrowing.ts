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

import type { ClassProfile } from './profile.ts';

/** Listed width -> measured speedup of a job's current statistical epoch. */
export type SpeedupTable = Readonly<Record<string, number>>;

/** The table of a class's statistical epoch (its last for a job past them); undefined: no class. */
export function epochSpeedups(
  profile: ClassProfile | undefined,
  statEpoch: number,
): SpeedupTable | undefined {
  const epochs = profile?.epochs;
  if (!epochs || epochs.length === 0) return undefined;
  return epochs[Math.min(statEpoch, epochs.length - 1)]?.speedup;
}

interface Step {
  readonly width: number;
  readonly price: number;
}

/** A table's speedup at `width`; an unlisted width counts as the best listed width below it. */
export function speedupAt(table: SpeedupTable, width: number): number {
  const listed = table[String(width)];
  if (listed !== undefined) return listed;
  // An unlisted width (a plan capped at the node group's size, a width narrowing left one GPU wider).
  let best = 1;
  for (const [key, speedup] of Object.entries(table))
    if (Number(key) < width && speedup > best) best = speedup;
  return best;
}

/** The job's cheapest step down from `width` (the narrower width reached at the lowest price). */
export function nextStepDown(table: SpeedupTable, width: number): Step | null {
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
  readonly #items: Candidate[] = [];
  get size(): number {
    return this.#items.length;
  }
  push(candidate: Candidate): void {
    const items = this.#items;
    items.push(candidate);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(items[i] as Candidate, items[parent] as Candidate)) break;
      [items[parent], items[i]] = [items[i] as Candidate, items[parent] as Candidate];
      i = parent;
    }
  }
  pop(): Candidate | undefined {
    const items = this.#items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last !== undefined) {
      items[0] = last;
      let i = 0;
      for (;;) {
        let first = i;
        for (const child of [2 * i + 1, 2 * i + 2]) {
          if (child < items.length && before(items[child] as Candidate, items[first] as Candidate))
            first = child;
        }
        if (first === i) break;
        [items[first], items[i]] = [items[i] as Candidate, items[first] as Candidate];
        i = first;
      }
    }
    return top;
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
  const heap = new StepHeap();
  const offer = (index: number, width: number) => {
    const { speedups, current } = jobs[index] as NarrowedJob;
    const step = speedups && width > 0 ? nextStepDown(speedups, width) : null;
    if (step === null) return;
    const tier = current === 0 ? 1 : current <= step.width ? 0 : 2;
    heap.push({ index, step, tier });
  };
  out.forEach((width, index) => offer(index, width));
  const taken: Array<{ index: number; from: number; to: number }> = [];
  while (total > whole && heap.size > 0) {
    const { index, step } = heap.pop() as Candidate;
    const from = out[index] as number;
    out[index] = step.width;
    total -= from - step.width;
    taken.push({ index, from, to: step.width });
    offer(index, step.width);
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
