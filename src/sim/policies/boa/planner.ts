/**
 * boa's planning step: the calculators on the profiles (never the truth) at the arrival rates and the
 * working budget. A budget below the minimum feasible one is planned at the minimum (every job on its
 * cheapest widths): the cheapest plan is all boa can do, and refusing mid-run would lose jobs.
 */
import { solveExact } from '../../../core/calc/exact.ts';
import {
  crossingMultiplier,
  LagrangianSolver,
  lagrangian,
  totalWeightedRate,
} from '../../../core/calc/lagrangian.ts';
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
    return widthsAtMultiplier(new LagrangianSolver(buildInstance(this.profiles, ones)), mu);
  }

  /**
   * The price (BOA's multiplier mu, seconds of JCT per GPU-second) of the exact plan at this budget: the
   * slope of the (budget, JCT) hull segment the budget lies on, found as solveExact finds it. At or below
   * the minimum feasible budget, the lowest price at which the cheapest plan is chosen; at or above the
   * fastest plan's budget, just under the highest price at which the fastest is.
   */
  priceAt(rates: Readonly<Record<string, number>>, budget: number): number {
    const { solver } = this.#lagrangian(rates);
    const weightedRate = totalWeightedRate(solver.instance);
    const cheapest = solver.cheapest();
    const fastest = solver.atMultiplier(0);
    const low = cheapest.value.gpuHoursPerHour;
    const high = fastest.value.gpuHoursPerHour;
    if (!(high > low)) return crossingMultiplier(fastest, cheapest, weightedRate);
    const edge = (high - low) * 1e-6;
    const target = Math.min(high - edge, Math.max(low + edge, budget));
    let over = fastest;
    let under = cheapest;
    let mu = crossingMultiplier(over, under, weightedRate);
    for (let step = 0; step < 500; step++) {
      mu = crossingMultiplier(over, under, weightedRate);
      const probe = solver.atMultiplier(mu);
      const onSegment = lagrangian(over, mu, weightedRate);
      if (lagrangian(probe, mu, weightedRate) >= onSegment - 1e-10 * Math.abs(onSegment)) break;
      if (probe.value.gpuHoursPerHour > target) over = probe;
      else under = probe;
    }
    // Above the fastest plan's budget every price up to the first segment's slope gives it; ties go
    // to the cheaper plan, so just under that slope.
    return budget >= high ? mu * (1 - 1e-6) : mu;
  }

  /**
   * The plan at price `mu` (LagrangianSolver.atMultiplier) for these rates: its widths do not depend on
   * the rates, its budget figures do. `plannedBudget` is the plan's own GPU-hours per hour.
   */
  atMultiplier(rates: Readonly<Record<string, number>>, mu: number): PlannedWidths {
    return widthsAtMultiplier(this.#lagrangian(rates).solver, mu);
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

/** The solver's plan at price `mu`, with its budget figures and the cheapest plan's budget. */
function widthsAtMultiplier(solver: LagrangianSolver, mu: number): PlannedWidths {
  const priced = solver.atMultiplier(mu);
  return {
    plan: fixedToMixed(solver.instance, priced.plan),
    plannedBudget: priced.value.gpuHoursPerHour,
    minFeasibleBudget: solver.cheapest().value.gpuHoursPerHour,
    ...priced.value,
  };
}
