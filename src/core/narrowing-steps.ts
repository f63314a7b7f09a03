/**
 * The machinery of narrowing by price (narrowing.ts): every table's steps down in flat arrays, and a
 * heap of the jobs' next steps.
 */

import type { SpeedupTable } from './profile.ts';
import type { NarrowedJobs } from './narrowing.ts';

/** A job's cheapest step down from a width: the width it reaches and the price at which it pays. */
export type StepDown = (table: SpeedupTable, width: number) => { width: number; price: number } | null;

/**
 * Every job's next step in a binary heap, the first to take on top, kept as two parallel arrays in heap
 * order (no object per step): its price, and a tie key (tier x jobs + jobs - 1 - index). At an equal
 * price (jobs of one class and epoch), what restarts nothing goes first: tier 0, a running job's step
 * that stays at or above the width it holds; 1, a waiting job's; 2, a running job's below what it
 * holds. Within a tier, the youngest job's first.
 */
export class StepHeap {
  readonly #price: Float64Array;
  readonly #tie: Int32Array;
  #size = 0;

  constructor(readonly jobs: number) {
    this.#price = new Float64Array(jobs);
    this.#tie = new Int32Array(jobs);
  }
  tie(index: number, tier: number): number {
    return tier * this.jobs + (this.jobs - 1 - index);
  }
  /** Adds a step before the heap is built. */
  add(price: number, tie: number): void {
    this.#price[this.#size] = price;
    this.#tie[this.#size++] = tie;
  }
  /** Builds the heap from what was added, at once (linear time). */
  build(): void {
    for (let i = (this.#size >> 1) - 1; i >= 0; i--) this.#siftDown(i);
  }
  get empty(): boolean {
    return this.#size === 0;
  }
  get topPrice(): number {
    return this.#price[0] as number;
  }
  get topIndex(): number {
    return this.jobs - 1 - ((this.#tie[0] as number) % this.jobs);
  }
  /** The top job's next step in its place, or (null) the job leaves the heap. */
  replaceTop(price: number | null, tie: number): void {
    if (price !== null) {
      this.#price[0] = price;
      this.#tie[0] = tie;
    } else {
      this.#size -= 1;
      if (this.#size === 0) return;
      this.#price[0] = this.#price[this.#size] as number;
      this.#tie[0] = this.#tie[this.#size] as number;
    }
    this.#siftDown(0);
  }
  #siftDown(from: number): void {
    const price = this.#price;
    const tie = this.#tie;
    const size = this.#size;
    const movingPrice = price[from] as number;
    const movingTie = tie[from] as number;
    let i = from;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= size) break;
      const right = child + 1;
      if (
        right < size &&
        ((price[right] as number) < (price[child] as number) ||
          (price[right] === price[child] && (tie[right] as number) < (tie[child] as number)))
      )
        child = right;
      const childPrice = price[child] as number;
      if (childPrice > movingPrice || (childPrice === movingPrice && (tie[child] as number) >= movingTie))
        break;
      price[i] = childPrice;
      tie[i] = tie[child] as number;
      i = child;
    }
    price[i] = movingPrice;
    tie[i] = movingTie;
  }
}

/**
 * Each table's steps from every width up to the widest planned on it, in flat arrays (`to`: the width
 * a step reaches, -1 for none; `price`: its price, times the class weight). `slotOf` is each job's
 * table and weight (-1: none, or nothing planned); a step's position is base[slot] + width.
 */
export function stepTables({ planned, speedups, weights }: NarrowedJobs, nextStepDown: StepDown) {
  const slotOf = new Int32Array(planned.length).fill(-1);
  const slots = new Map<SpeedupTable, Map<number, number>>();
  const slotTables: SpeedupTable[] = [];
  const slotWeights: number[] = [];
  const widest: number[] = [];
  for (let index = 0; index < planned.length; index++) {
    const table = speedups[index];
    const width = planned[index] as number;
    if (table === undefined || width <= 0) continue;
    const weight = weights?.[index] ?? 1;
    let byWeight = slots.get(table);
    if (byWeight === undefined) slots.set(table, (byWeight = new Map()));
    let slot = byWeight.get(weight);
    if (slot === undefined) {
      byWeight.set(weight, (slot = widest.push(0) - 1));
      slotTables.push(table);
      slotWeights.push(weight);
    }
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
  slotTables.forEach((table, slot) => {
    const weight = slotWeights[slot] as number;
    for (let width = 1; width <= (widest[slot] as number); width++) {
      const step = nextStepDown(table, width);
      if (step === null) continue;
      to[(base[slot] as number) + width] = step.width;
      price[(base[slot] as number) + width] = step.price * weight;
    }
  });
  return { slotOf, base, to, price };
}

export type StepTables = ReturnType<typeof stepTables>;
