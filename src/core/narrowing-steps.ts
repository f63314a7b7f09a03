/**
 * The machinery of narrowing by price (narrowing.ts): every table's steps down in flat arrays, their
 * prices as integer ranks, and a heap of the jobs' next steps keyed by one number each.
 */

import type { SpeedupTable } from './profile.ts';
import type { NarrowedJobs } from './narrowing.ts';

/** A job's cheapest step down from a width: the width it reaches and the price at which it pays. */
export type StepDown = (table: SpeedupTable, width: number) => { width: number; price: number } | null;

/**
 * Every job's next step in one binary heap of packed keys, the first to take on top. A key is
 * (price rank x 3 + tie tier) x jobs + (jobs - 1 - index): one number compares what three did. At an equal price (jobs of one class
 * and epoch), what restarts nothing goes first: tier 0, a running job's step that stays at or above the
 * width it holds; 1, a waiting job's; 2, a running job's below what it holds. Within a tier, the
 * youngest job's first.
 */
export class StepHeap {
  readonly #keys: Float64Array;
  #size = 0;

  constructor(readonly jobs: number) {
    this.#keys = new Float64Array(jobs);
  }
  key(index: number, rank: number, tier: number): number {
    return (rank * 3 + tier) * this.jobs + (this.jobs - 1 - index);
  }
  /** Adds a key before the heap is built. */
  add(key: number): void {
    this.#keys[this.#size++] = key;
  }
  /** Builds the heap from what was added, at once (linear time). */
  build(): void {
    for (let i = (this.#size >> 1) - 1; i >= 0; i--) this.#siftDown(i);
  }
  get empty(): boolean {
    return this.#size === 0;
  }
  /** The price rank of the top job's step. */
  get topRank(): number {
    return Math.floor((this.#keys[0] as number) / (3 * this.jobs));
  }
  get topIndex(): number {
    return this.jobs - 1 - ((this.#keys[0] as number) % this.jobs);
  }
  /** The top job's next step's key in its place, or (null) the job leaves the heap. */
  replaceTop(key: number | null): void {
    if (key !== null) this.#keys[0] = key;
    else {
      this.#size -= 1;
      if (this.#size === 0) return;
      this.#keys[0] = this.#keys[this.#size] as number;
    }
    this.#siftDown(0);
  }
  #siftDown(from: number): void {
    const keys = this.#keys;
    const size = this.#size;
    const moving = keys[from] as number;
    let i = from;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= size) break;
      if (child + 1 < size && (keys[child + 1] as number) < (keys[child] as number)) child += 1;
      if ((keys[child] as number) >= moving) break;
      keys[i] = keys[child] as number;
      i = child;
    }
    keys[i] = moving;
  }
}

/**
 * Each table's steps from every width up to the widest planned on it, in flat arrays (`to` -1: no
 * step), and each step's price as its rank among all of them, so that the heap compares integers.
 * `slotOf` is each job's table (-1: none, or nothing planned); a step's position is base[slot] + width.
 */
export function stepTables({ planned, speedups }: NarrowedJobs, nextStepDown: StepDown) {
  const slotOf = new Int32Array(planned.length).fill(-1);
  const slots = new Map<SpeedupTable, number>();
  const widest: number[] = [];
  for (let index = 0; index < planned.length; index++) {
    const table = speedups[index];
    const width = planned[index] as number;
    if (table === undefined || width <= 0) continue;
    let slot = slots.get(table);
    if (slot === undefined) slots.set(table, (slot = widest.push(0) - 1));
    slotOf[index] = slot;
    if (width > (widest[slot] as number)) widest[slot] = width;
  }
  const base = new Int32Array(widest.length);
  let size = 0;
  widest.forEach((w, slot) => {
    base[slot] = size;
    size += w + 1;
  });
  const to = new Int32Array(size).fill(-1);
  const price = new Float64Array(size);
  for (const [table, slot] of slots) {
    for (let width = 1; width <= (widest[slot] as number); width++) {
      const step = nextStepDown(table, width);
      if (step === null) continue;
      to[(base[slot] as number) + width] = step.width;
      price[(base[slot] as number) + width] = step.price;
    }
  }
  const sorted = Float64Array.from(price).sort();
  const rank = new Int32Array(size);
  for (let at = 0; at < size; at++) rank[at] = lowerBound(sorted, price[at] as number);
  return { slotOf, base, to, rank };
}

export type StepTables = ReturnType<typeof stepTables>;

/** The first position in `sorted` holding at least `value`: equal prices share a rank. */
function lowerBound(sorted: Float64Array, value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((sorted[mid] as number) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
