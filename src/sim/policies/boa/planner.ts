/**
 * boa's planning step: the calculators on the profiles (never the truth) at the arrival rates and the
 * working budget. A budget below the minimum feasible one is planned at the minimum (every job on its
 * cheapest widths): the cheapest plan is all boa can do, and refusing mid-run would lose jobs.
 */
import { solveExact } from '../../../core/calc/exact.ts';
import { LagrangianSolver } from '../../../core/calc/lagrangian.ts';
import { solvePaper } from '../../../core/calc/paper.ts';
import { buildInstance } from '../../../core/instance.ts';
import { fixedToMixed, type MixedPlan } from '../../../core/plan.ts';
import type { ProfileFile } from '../../../core/profile.ts';

export interface PlannedWidths {
  readonly plan: MixedPlan;
  /** The budget the calculator was given (at least the minimum feasible). */
  readonly plannedBudget: number;
  readonly minFeasibleBudget: number;
  /** The plan's own GPU-hours per hour and average JCT (Lemma 4.8). */
  readonly gpuHoursPerHour: number;
  readonly avgJctSeconds: number;
}

export class BoaPlanner {
  #solverFor: { key: string; solver: LagrangianSolver } | undefined;

  constructor(
    readonly profiles: ProfileFile,
    readonly solver: 'exact' | 'paper',
    readonly seed: number,
  ) {}

  /** Minimum feasible budget at these rates (classes with a zero rate are not planned). */
  minFeasible(rates: Readonly<Record<string, number>>): number {
    return this.#lagrangian(rates).solver.cheapest().value.gpuHoursPerHour;
  }

  plan(rates: Readonly<Record<string, number>>, budget: number): PlannedWidths {
    const { solver } = this.#lagrangian(rates);
    const instance = solver.instance;
    const cheapest = solver.cheapest();
    const minFeasibleBudget = cheapest.value.gpuHoursPerHour;
    const atMinimum = (): PlannedWidths => ({
      plan: fixedToMixed(instance, cheapest.plan),
      plannedBudget: minFeasibleBudget,
      minFeasibleBudget,
      ...cheapest.value,
    });
    if (!(budget > minFeasibleBudget)) return atMinimum();
    const solution =
      this.solver === 'exact'
        ? solveExact(instance, budget, { solver })
        : solvePaper(instance, budget, { seed: this.seed });
    if (solution === null) return atMinimum();
    return { plan: solution.plan, plannedBudget: budget, minFeasibleBudget, ...solution.value };
  }

  /**
   * The plan at a price `mu` per GPU-second: per class and job, the widths minimising JCT + mu x GPU-time
   * (BOA.md's Lagrangian, which separates by class, so no rate enters the widths). Its budget figures are
   * those of one arrival per hour of each class: a price plans for no load.
   */
  atPrice(mu: number): PlannedWidths {
    const ones = Object.fromEntries(this.profiles.classes.map((c) => [c.name, 1]));
    const solver = new LagrangianSolver(buildInstance(this.profiles, ones));
    const priced = solver.atMultiplier(mu);
    return {
      plan: fixedToMixed(solver.instance, priced.plan),
      plannedBudget: priced.value.gpuHoursPerHour,
      minFeasibleBudget: solver.cheapest().value.gpuHoursPerHour,
      ...priced.value,
    };
  }

  /** One compiled solver per set of rates: planning again at the same rates reuses it. */
  #lagrangian(rates: Readonly<Record<string, number>>): { solver: LagrangianSolver } {
    const positive = Object.fromEntries(Object.entries(rates).filter(([, r]) => r > 0));
    const key = JSON.stringify(Object.entries(positive).sort(([a], [b]) => a.localeCompare(b)));
    if (this.#solverFor?.key !== key) {
      this.#solverFor = { key, solver: new LagrangianSolver(buildInstance(this.profiles, positive)) };
    }
    return this.#solverFor;
  }
}
