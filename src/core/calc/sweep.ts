import type { Instance } from '../instance.ts';
import type { MixedPlan } from '../plan.ts';
import { BudgetTooLowError } from './errors.ts';
import { solveExact } from './exact.ts';
import { LagrangianSolver } from './lagrangian.ts';
import { type PaperOptions, solvePaper } from './paper.ts';
import type { SolverName } from './solution.ts';

/** One budget's result in the frontier report; null values when the solver found no plan. */
export interface SweepPoint {
  readonly budget: number;
  readonly gpuHoursPerHour: number | null;
  readonly avgJctSeconds: number | null;
  readonly solveMs: number;
  readonly classes: MixedPlan | null;
}

export interface SweepOptions {
  paper?: PaperOptions;
  /** Milliseconds clock, injected so callers decide what is timed. */
  now?: () => number;
  onPoint?: (done: number) => void;
}

/** Solves every budget with one solver, timing each solve on its own. */
export function sweepBudgets(
  instance: Instance,
  solver: SolverName,
  budgets: readonly number[],
  options: SweepOptions = {},
): SweepPoint[] {
  const now = options.now ?? (() => performance.now());
  const minimum = new LagrangianSolver(instance).cheapest().value.gpuHoursPerHour;
  const low = budgets.find((b) => b < minimum * (1 - 1e-9));
  if (low !== undefined) throw new BudgetTooLowError(low, minimum);
  return budgets.map((budget, i) => {
    const start = now();
    const solution =
      solver === 'exact' ? solveExact(instance, budget) : solvePaper(instance, budget, options.paper);
    const solveMs = now() - start;
    options.onPoint?.(i + 1);
    return {
      budget,
      gpuHoursPerHour: solution?.value.gpuHoursPerHour ?? null,
      avgJctSeconds: solution?.value.avgJctSeconds ?? null,
      solveMs,
      classes: solution?.plan ?? null,
    };
  });
}
