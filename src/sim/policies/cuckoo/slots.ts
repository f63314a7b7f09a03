/**
 * The min-cost assignment of free GPU slots to jobs, as a min-cost flow: source -> job j -> sink, where
 * job j's k-th GPU is an arc of capacity 1 costing C_j(k) - C_j(k - 1), and the sink takes at most
 * `slots` units. C_j is a job's cost at k GPUs (cost.ts); it is convex in k (its run time comes from the
 * concave hull of the speedups), so job j's arcs get dearer in k and any optimal flow takes a prefix of
 * them. Successive shortest paths on this network augment one unit along the cheapest open arc each
 * time (every source-sink path is source -> j -> sink, and a reverse arc only leads back to the source),
 * and stop when the cheapest path no longer lowers the cost or the slots run out. That is what
 * `assignSlots` does, with a heap: O((jobs + slots) log jobs). It is exact for convex costs (tested
 * against brute force); GPUs of a cluster are interchangeable here, and where they go is the
 * executor's job.
 */

export interface SlotDemand {
  /** GPUs the job gets before any is assigned (1 for an admitted job; its width for a kept one). */
  readonly min: number;
  /** cost[k]: the job's cost at k GPUs, k = 0..max; convex in k from `min` on. */
  readonly cost: Float64Array;
}

export class SlotAssignmentError extends Error {
  override name = 'SlotAssignmentError';
}

/** Widths minimising sum_j cost_j[w_j] with min_j <= w_j < cost_j.length and sum_j w_j <= slots. */
export function assignSlots(demands: readonly SlotDemand[], slots: number): Int32Array {
  const widths = Int32Array.from(demands, (d) => d.min);
  let left = slots - widths.reduce((sum, w) => sum + w, 0);
  demands.forEach((d, j) => {
    if (!(Number.isInteger(d.min) && d.min >= 0 && d.min < d.cost.length)) {
      throw new SlotAssignmentError(
        `demand ${j}: its minimum must be an integer within 0..${d.cost.length - 1}, got ${d.min}`,
      );
    }
  });
  if (left < 0) {
    throw new SlotAssignmentError(
      `the demands' minimums need ${slots - left} GPUs but only ${slots} are free`,
    );
  }
  const heap = new GainHeap();
  const offer = (j: number) => {
    const w = widths[j] as number;
    const cost = (demands[j] as SlotDemand).cost;
    if (w + 1 < cost.length) heap.push((cost[w] as number) - (cost[w + 1] as number), j);
  };
  demands.forEach((_, j) => offer(j));
  while (left > 0 && heap.size > 0) {
    const [gain, j] = heap.pop();
    // The cheapest augmenting path no longer lowers the cost.
    if (!(gain > 0)) break;
    widths[j] = (widths[j] as number) + 1;
    left--;
    offer(j);
  }
  return widths;
}

/** A max-heap of (gain, job); equal gains go to the lower job index (deterministic). */
class GainHeap {
  readonly #gains: number[] = [];
  readonly #jobs: number[] = [];

  get size(): number {
    return this.#gains.length;
  }

  push(gain: number, job: number): void {
    this.#gains.push(gain);
    this.#jobs.push(job);
    let i = this.#gains.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#above(i, parent)) break;
      this.#swap(i, parent);
      i = parent;
    }
  }

  pop(): [number, number] {
    const top: [number, number] = [this.#gains[0] as number, this.#jobs[0] as number];
    const lastGain = this.#gains.pop() as number;
    const lastJob = this.#jobs.pop() as number;
    if (this.#gains.length > 0) {
      this.#gains[0] = lastGain;
      this.#jobs[0] = lastJob;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let best = i;
        if (l < this.#gains.length && this.#above(l, best)) best = l;
        if (r < this.#gains.length && this.#above(r, best)) best = r;
        if (best === i) break;
        this.#swap(i, best);
        i = best;
      }
    }
    return top;
  }

  #above(a: number, b: number): boolean {
    const ga = this.#gains[a] as number;
    const gb = this.#gains[b] as number;
    return ga > gb || (ga === gb && (this.#jobs[a] as number) < (this.#jobs[b] as number));
  }

  #swap(a: number, b: number): void {
    [this.#gains[a], this.#gains[b]] = [this.#gains[b] as number, this.#gains[a] as number];
    [this.#jobs[a], this.#jobs[b]] = [this.#jobs[b] as number, this.#jobs[a] as number];
  }
}
