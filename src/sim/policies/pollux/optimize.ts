/**
 * Pollux's allocation search, made exact. With p = -1 the fitness is a sum of per-job terms (fitness.ts),
 * so choosing every job's width under the cluster's GPU count is a multiple-choice knapsack: one dynamic
 * programme over (job, GPUs used) finds the best widths exactly, in O(jobs x GPUs x options). Pollux's
 * genetic algorithm (NSGA-II, 100 x 100 evaluations per round) only approximates this optimum; placement
 * on nodes follows separately (placement.ts).
 */
import { FAIRNESS_POWER, fitnessCost } from './fitness.ts';
import type { JobCurve, WidthOption } from './speedup.ts';

export class PolluxOptimiseError extends Error {
  override name = 'PolluxOptimiseError';
}

export interface CostedOption {
  readonly width: number;
  readonly cost: number;
}

export interface KnapsackResult {
  /** Per job: index of its chosen option, or -1 for no GPUs. */
  readonly choices: readonly number[];
  readonly totalCost: number;
}

/**
 * Minimises the summed cost of one option per job with total width <= budget. `idleCosts[j]` is job j's
 * cost with no GPUs; without it every job must get one of its options. Ties go to narrower options,
 * and from idle to running.
 */
export function minimiseCost(
  jobs: readonly (readonly CostedOption[])[],
  budget: number,
  idleCosts?: readonly number[],
): KnapsackResult {
  if (!(Number.isInteger(budget) && budget >= 0)) {
    throw new PolluxOptimiseError(`the GPU budget must be an integer >= 0, got ${budget}`);
  }
  if (idleCosts !== undefined && idleCosts.length !== jobs.length) {
    throw new PolluxOptimiseError(`${jobs.length} jobs but ${idleCosts.length} idle costs`);
  }
  const size = budget + 1;
  // best[g]: least cost of the jobs so far using at most g GPUs.
  let best = new Float64Array(size);
  let next = new Float64Array(size);
  const choice = new Int16Array(jobs.length * size);
  for (let j = 0; j < jobs.length; j++) {
    const options = jobs[j] as readonly CostedOption[];
    const widths = options.map((o) => o.width);
    const costs = options.map((o) => o.cost);
    const idle = idleCosts?.[j];
    for (let g = 0; g < size; g++) {
      let value = Number.POSITIVE_INFINITY;
      let pick = -1;
      for (let o = 0; o < widths.length; o++) {
        const width = widths[o] as number;
        if (width > g) continue;
        const candidate = (best[g - width] as number) + (costs[o] as number);
        if (candidate < value) {
          value = candidate;
          pick = o;
        }
      }
      // Idle only when strictly better: a job that gains nothing either way still runs.
      if (idle !== undefined && (best[g] as number) + idle < value) {
        value = (best[g] as number) + idle;
        pick = -1;
      }
      next[g] = value;
      choice[j * size + g] = pick;
    }
    [best, next] = [next, best];
  }
  const totalCost = best[budget] as number;
  if (!Number.isFinite(totalCost)) {
    throw new PolluxOptimiseError(
      `${jobs.length} jobs that must each get GPUs do not fit in ${budget} GPUs; allow idle jobs`,
    );
  }
  const choices = new Array<number>(jobs.length).fill(-1);
  let g = budget;
  for (let j = jobs.length - 1; j >= 0; j--) {
    const pick = choice[j * size + g] as number;
    choices[j] = pick;
    if (pick >= 0) g -= (jobs[j] as readonly CostedOption[])[pick]?.width ?? 0;
  }
  return { choices, totalCost };
}

export interface WidthPlan {
  /** Per curve (same order): the chosen option, or null for no GPUs. */
  readonly chosen: readonly (WidthOption | null)[];
  /** Sum of the per-job fitness terms (lower is fitter). */
  readonly cost: number;
}

/**
 * The fittest widths for these jobs on `gpus` GPUs: SPEEDUP_j = effective goodput / fair-share goodput.
 * Pollux gives every job at least one GPU when there are as many GPUs as jobs; otherwise some wait.
 */
export function planWidths(
  curves: readonly JobCurve[],
  fairGoodputs: readonly number[],
  gpus: number,
  p = FAIRNESS_POWER,
): WidthPlan {
  const speedup = (goodput: number, j: number) => {
    const fair = fairGoodputs[j] as number;
    return fair > 0 ? goodput / fair : 0;
  };
  const costed = curves.map((curve, j) =>
    curve.options.map((o) => ({ width: o.width, cost: fitnessCost(speedup(o.effective, j), p) })),
  );
  const idle = curves.length > gpus ? curves.map(() => fitnessCost(0, p)) : undefined;
  const { choices, totalCost } = minimiseCost(costed, gpus, idle);
  return {
    chosen: choices.map((c, j) => (c < 0 ? null : ((curves[j] as JobCurve).options[c] as WidthOption))),
    cost: totalCost,
  };
}
