/**
 * boa plans allocated GPU-time, but the budget is spent on paid node time: node rounding, boot time,
 * release lag and idle fragments make paid exceed allocated. This estimates paid / allocated from what
 * the scheduler itself sees each tick (nodes present, GPUs allocated, nodes that went away), with
 * exponential forgetting, so the plan can aim at budget / ratio.
 */

export interface PaidRatioOptions {
  /** Ratio assumed before anything is observed, weighted as `priorSeconds` of allocation at `priorGpus`. */
  readonly priorRatio: number;
  readonly priorGpus: number;
  readonly priorSeconds: number;
  /** Older observations count half after this long. */
  readonly halfLifeSeconds: number;
  /** A released node is still paid this long (the node group's configured release lag). */
  readonly releaseLagSeconds: number;
}

export class PaidRatioEstimator {
  #paid: number;
  #allocated: number;
  #last: { now: number; nodeGpus: ReadonlyMap<number, number> } | undefined;

  constructor(readonly options: PaidRatioOptions) {
    this.#allocated = options.priorGpus * options.priorSeconds;
    this.#paid = this.#allocated * options.priorRatio;
  }

  /** Paid / allocated, never below 1 (allocated GPUs always sit on paid nodes). */
  ratio(): number {
    return this.#allocated > 0 ? Math.max(1, this.#paid / this.#allocated) : 1;
  }

  /**
   * Books the interval since the previous tick. `nodeGpus`: the nodes present now, by id (each was paid
   * through the interval: nodes only come and go at ticks); a node present before and gone now was
   * released at the previous tick and paid its release lag. `allocatedGpuSeconds`: what the jobs held.
   * Returns the GPU-seconds paid in the interval.
   */
  observe(now: number, nodeGpus: ReadonlyMap<number, number>, allocatedGpuSeconds: number): number {
    const last = this.#last;
    this.#last = { now, nodeGpus };
    if (last === undefined) return 0;
    const dt = now - last.now;
    if (!(dt > 0)) return 0;
    let paid = 0;
    for (const gpus of nodeGpus.values()) paid += gpus * dt;
    for (const [id, gpus] of last.nodeGpus) {
      if (!nodeGpus.has(id)) paid += gpus * this.options.releaseLagSeconds;
    }
    const decay = 0.5 ** (dt / this.options.halfLifeSeconds);
    this.#paid = this.#paid * decay + paid;
    this.#allocated = this.#allocated * decay + allocatedGpuSeconds;
    return paid;
  }
}
