/**
 * The GPUs paid below the budget at an instant, and why, the same in the service (`GET /v1/budget`,
 * `boa budget get`) and the simulator (`simulate --unspent`, src/sim/unspent.ts):
 *
 * - waiting: some job has no GPUs (it waits for the budget, for nodes to boot, or for a plan);
 * - usable: GPUs the running jobs could take, each step adding at least `minMarginalSpeedup` of a GPU's
 *   speedup per GPU by the class profile at the job's statistical epoch (the drain's rule), beyond the
 *   idle GPUs already paid for: the plan does not buy them at the budget's price, or the ceiling holds
 *   them back;
 * - unusable: the rest, budget nothing present can use at that rate.
 *
 * Why: the budget's band (issue 14) asks boa to spend within 3% of the budget, and budget unspent may
 * lack jobs that can use it rather than be spent too little on jobs that could.
 */

import { speedupAt } from './profile.ts';

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
  // What the job runs at now: on a width where the measurement dips, that lower speed.
  let at = speedupAt(speedup, width);
  // The next listed width worth its GPUs, skipping a dip (a step across a node boundary) when a wider
  // one is worth them from here.
  for (;;) {
    const next = table.find((s) => s.width > current && (s.speedup - at) / (s.width - current) >= min);
    if (next === undefined) return current - width;
    current = next.width;
    at = next.speedup;
  }
}

/** What the split reads at one instant. */
export interface BelowBudgetInput {
  /** The budget's GPU-hours per hour: the GPUs it pays for on average. */
  readonly budgetGpus: number;
  readonly paidGpus: number;
  readonly allocatedGpus: number;
  /** Some job has no GPUs. */
  readonly anyWaiting: boolean;
  /** The running jobs' usableExtraGpus, summed. */
  readonly usableGpus: number;
}

/** GPUs below the budget (0 at or above it), and the split of them; the three parts add up to `gpus`. */
export interface BelowBudget {
  readonly gpus: number;
  readonly waitingGpus: number;
  readonly usableGpus: number;
  readonly unusableGpus: number;
}

export function belowBudget(input: BelowBudgetInput): BelowBudget {
  const gpus = Math.max(0, input.budgetGpus - input.paidGpus);
  if (gpus === 0) return { gpus, waitingGpus: 0, usableGpus: 0, unusableGpus: 0 };
  if (input.anyWaiting) return { gpus, waitingGpus: gpus, usableGpus: 0, unusableGpus: 0 };
  // Idle GPUs already paid for serve the first of those steps.
  const idle = Math.max(0, input.paidGpus - input.allocatedGpus);
  const usableGpus = Math.min(gpus, Math.max(0, input.usableGpus - idle));
  return { gpus, waitingGpus: 0, usableGpus, unusableGpus: gpus - usableGpus };
}
