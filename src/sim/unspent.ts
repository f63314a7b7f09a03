/**
 * Where a budget went unspent in a simulated run: at every tick where the cluster paid for fewer GPUs
 * than the budget, the gap is split by what the jobs present could have used.
 *
 * - waiting: some job had no GPUs (queued for the budget, or waiting for nodes to boot);
 * - usable: GPUs the running jobs could have taken, each step adding at least `minMarginalSpeedup` of a
 *   GPU's speedup per GPU by the class profile at the job's statistical epoch (the drain's rule);
 * - unusable: the rest, budget nothing present could use at that rate.
 *
 * Why: the budget's band (issue 14) asks boa to spend within 3% of the budget, and a run that leaves
 * budget unspent may lack jobs that can use it rather than spend too little on jobs that could.
 */
import { type ClassProfile, epochSpeedups } from '../core/profile.ts';
import type { TickSnapshot } from './engine/engine.ts';

/** GPU-hours over the run, each a share of the budget's GPU-hours. */
export interface UnspentSplit {
  /** The budget times the hours observed. */
  readonly budgetGpuHours: number;
  /** Below the budget, in all: waiting + usable + unusable. */
  readonly underGpuHours: number;
  readonly waitingGpuHours: number;
  readonly usableGpuHours: number;
  readonly unusableGpuHours: number;
  /** Above the budget (spent out of room saved earlier). */
  readonly overGpuHours: number;
}

/** The drain's floor: a GPU that adds less than half a GPU's speedup is not worth buying. */
export const DEFAULT_MIN_MARGINAL_SPEEDUP = 0.5;

/** GPUs a job at `width` could add, listed width by listed width, each adding >= `min` speedup per GPU. */
export function usableExtraGpus(
  speedup: Readonly<Record<string, number>>,
  width: number,
  min: number,
): number {
  const table = Object.entries(speedup)
    .map(([key, value]) => ({ width: Number(key), speedup: value }))
    .sort((a, b) => a.width - b.width);
  let current = width;
  let at = 1;
  for (const step of table) if (step.width <= width) at = Math.max(at, step.speedup);
  // The next listed width worth its GPUs, skipping a dip (a step across a node boundary) when a wider
  // one is worth them from here.
  for (;;) {
    const next = table.find((s) => s.width > current && (s.speedup - at) / (s.width - current) >= min);
    if (next === undefined) return current - width;
    current = next.width;
    at = next.speedup;
  }
}

/** Accumulates the split tick by tick: each snapshot's state holds until the next one. */
export class UnspentAccount {
  #last: { at: number; gap: number; waiting: boolean; usable: number } | undefined;
  #budgetSeconds = 0;
  #under = { waiting: 0, usable: 0, unusable: 0 };
  #over = 0;

  constructor(
    readonly budget: number,
    readonly classes: ReadonlyMap<string, ClassProfile>,
    readonly minMarginalSpeedup = DEFAULT_MIN_MARGINAL_SPEEDUP,
  ) {}

  observe(tick: TickSnapshot): void {
    this.#close(tick.cluster.now);
    const paid = tick.cluster.nodes.reduce((sum, node) => sum + node.gpus, 0);
    let allocated = 0;
    let waiting = false;
    let usable = 0;
    for (const job of tick.jobs) {
      const width = tick.allocations.get(job.id)?.length ?? 0;
      allocated += width;
      if (width === 0) {
        waiting = true;
        continue;
      }
      const speedups = epochSpeedups(this.classes.get(job.app), job.statEpoch);
      if (speedups) usable += usableExtraGpus(speedups, width, this.minMarginalSpeedup);
    }
    // Idle GPUs already paid for serve the first of those steps.
    usable = Math.max(0, usable - (paid - allocated));
    this.#last = { at: tick.cluster.now, gap: this.budget - paid, waiting, usable };
  }

  /** The split up to `at` (seconds), the last tick's state held until then. */
  finish(at: number): UnspentSplit {
    this.#close(at);
    const hours = (seconds: number) => seconds / 3600;
    const { waiting, usable, unusable } = this.#under;
    return {
      budgetGpuHours: hours(this.#budgetSeconds * this.budget),
      underGpuHours: hours(waiting + usable + unusable),
      waitingGpuHours: hours(waiting),
      usableGpuHours: hours(usable),
      unusableGpuHours: hours(unusable),
      overGpuHours: hours(this.#over),
    };
  }

  #close(at: number): void {
    const last = this.#last;
    if (last === undefined || at <= last.at) return;
    const seconds = at - last.at;
    this.#budgetSeconds += seconds;
    if (last.gap < 0) {
      this.#over += -last.gap * seconds;
    } else if (last.waiting) {
      this.#under.waiting += last.gap * seconds;
    } else {
      const usable = Math.min(last.gap, last.usable);
      this.#under.usable += usable * seconds;
      this.#under.unusable += (last.gap - usable) * seconds;
    }
    this.#last = { ...last, at };
  }
}
