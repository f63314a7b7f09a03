import { evaluateFixed, type PlanValue } from '../evaluate.ts';
import { SECONDS_PER_HOUR } from '../units.ts';
import type { Instance } from '../instance.ts';
import { type FixedPlan, fixedToMixed } from '../plan.ts';
import { BudgetTooLowError, withinBudget } from './errors.ts';
import { LagrangianSolver } from './lagrangian.ts';
import { drawGlueConfigurations, type GlueConfiguration, glueEpochs, type SuperEpoch } from './paper/glue.ts';
import {
  makeRelaxedItem,
  type RelaxedItem,
  relaxedMinimumBudget,
  roundToHull,
  solveRelaxed,
} from './paper/relaxed.ts';
import type { Solution } from './solution.ts';

export interface PaperOptions {
  /** Glue configurations drawn (the paper: 50). */
  configurations?: number;
  /** Budget cut applied when a rounded plan overspends (the paper: 1%). */
  budgetStep?: number;
  seed?: number;
  /**
   * Asked before each configuration: true stops drawing, and the best plan so far is the answer, or
   * null when there is none yet (the service then solves exactly: compute.ts). On the largest profiles
   * the 50 configurations take minutes, past the service's timeout, and the plan failed.
   */
  outOfTime?: () => boolean;
}

/** A glue configuration compiled once: its relaxed items and how they map back to epochs. */
interface CompiledConfiguration {
  readonly items: readonly RelaxedItem[];
  readonly owners: ReadonlyArray<{ readonly classIndex: number; readonly superEpoch: SuperEpoch }>;
  readonly relaxedMinimum: number;
}

function compileConfiguration(instance: Instance, glue: GlueConfiguration): CompiledConfiguration {
  const items: RelaxedItem[] = [];
  const owners: Array<{ classIndex: number; superEpoch: SuperEpoch }> = [];
  instance.classes.forEach((cls, classIndex) => {
    for (const superEpoch of glueEpochs(cls, glue[classIndex] as number)) {
      const { workSeconds, widths, speedups } = superEpoch.epoch;
      items.push(
        makeRelaxedItem(
          widths,
          speedups,
          cls.weight,
          cls.ratePerHour * cls.weight * workSeconds,
          (cls.ratePerHour * workSeconds) / SECONDS_PER_HOUR,
        ),
      );
      owners.push({ classIndex, superEpoch });
    }
  });
  return { items, owners, relaxedMinimum: relaxedMinimumBudget(items) };
}

/** Expands per-item widths back to one width per original epoch. */
function expand(instance: Instance, config: CompiledConfiguration, itemWidths: readonly number[]): FixedPlan {
  const plan = instance.classes.map((cls) => new Array<number>(cls.epochs.length).fill(0));
  config.owners.forEach(({ classIndex, superEpoch }, e) => {
    const widths = plan[classIndex] as number[];
    widths.fill(itemWidths[e] as number, superEpoch.first, superEpoch.first + superEpoch.count);
  });
  return plan;
}

/**
 * The paper's Algorithm 1 (appendix C), faithfully: for each random glue configuration, solve the relaxed
 * problem, round to hull widths, evaluate with rescale costs, and cut the working budget by 1% until the
 * rounded plan fits. Guarded at the relaxed minimum, where the paper's loop would never end. When no
 * configuration's rounded plan fits, the cheapest plan (every job on its cheapest widths).
 */
export function solvePaper(instance: Instance, budget: number, options: PaperOptions = {}): Solution | null {
  const cheapest = new LagrangianSolver(instance).cheapest();
  const minFeasibleBudget = cheapest.value.gpuHoursPerHour;
  if (!withinBudget(minFeasibleBudget, budget)) throw new BudgetTooLowError(budget, minFeasibleBudget);
  const step = 1 - (options.budgetStep ?? 0.01);
  const glues = drawGlueConfigurations(instance.classes, options.configurations ?? 50, options.seed ?? 1);
  let best: { plan: FixedPlan; value: PlanValue } | null = null;
  for (const glue of glues) {
    if (options.outOfTime?.()) {
      if (!best) return null;
      break;
    }
    const config = compileConfiguration(instance, glue);
    let working = budget;
    for (;;) {
      const belowRelaxed = working < config.relaxedMinimum;
      const relaxed = solveRelaxed(config.items, belowRelaxed ? config.relaxedMinimum : working);
      const widths = relaxed.widths.map((k, e) => roundToHull(config.items[e] as RelaxedItem, k));
      const plan = expand(instance, config, widths);
      const value = evaluateFixed(instance, plan);
      if (withinBudget(value.gpuHoursPerHour, budget)) {
        if (!best || value.avgJctSeconds < best.value.avgJctSeconds) best = { plan, value };
        break;
      }
      if (belowRelaxed) break;
      working *= step;
    }
  }
  // Among equally efficient hull vertices (a linear start, s(2) = 2) the relaxed problem starts at the
  // widest, which is only as cheap without rescale costs: near the minimum every rounding then
  // overspends. The cheapest plan fits any budget the check above let through.
  if (!best) best = { plan: cheapest.plan, value: cheapest.value };
  return {
    solver: 'paper',
    budget,
    plan: fixedToMixed(instance, best.plan),
    value: best.value,
    minFeasibleBudget,
  };
}
