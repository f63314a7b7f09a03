import { evaluateMixed } from '../evaluate.ts';
import type { Instance } from '../instance.ts';
import { fixedToMixed, mixPlans } from '../plan.ts';
import { BUDGET_TOLERANCE, BudgetTooLowError, withinBudget } from './errors.ts';
import {
  crossingMultiplier,
  LagrangianSolver,
  lagrangian,
  totalWeightedRate,
  type Vertex,
} from './lagrangian.ts';
import type { Solution } from './solution.ts';

export interface ExactOptions {
  /** Reuse a compiled solver across budgets on the same instance. */
  solver?: LagrangianSolver;
}

const MAX_VERTEX_STEPS = 500;

/**
 * The exact calculator: finds the two adjacent vertices of the lower convex hull of all achievable
 * (budget, JCT) pairs that bracket the budget, and mixes them so the budget is spent exactly.
 * Each step solves the Lagrangian at the slope between the current bracket (Eisner-Severance), so
 * it lands on a hull vertex every time and stops when no plan lies below the bracket's segment.
 */
export function solveExact(instance: Instance, budget: number, options: ExactOptions = {}): Solution {
  const solver = options.solver ?? new LagrangianSolver(instance);
  const weightedRate = totalWeightedRate(instance);
  const cheapest = solver.cheapest();
  const minFeasibleBudget = cheapest.value.gpuHoursPerHour;
  if (!withinBudget(minFeasibleBudget, budget)) throw new BudgetTooLowError(budget, minFeasibleBudget);
  const fastest = solver.atMultiplier(0);
  const done = (vertex: Vertex): Solution => ({
    solver: 'exact',
    budget,
    plan: fixedToMixed(instance, vertex.plan),
    value: vertex.value,
    minFeasibleBudget,
  });
  if (withinBudget(fastest.value.gpuHoursPerHour, budget)) return done(fastest);

  let over = fastest;
  let under = cheapest;
  for (let step = 0; step < MAX_VERTEX_STEPS; step++) {
    const mu = crossingMultiplier(over, under, weightedRate);
    const probe = solver.atMultiplier(mu);
    const onSegment = lagrangian(over, mu, weightedRate);
    if (lagrangian(probe, mu, weightedRate) >= onSegment - 1e-10 * Math.abs(onSegment)) break;
    const spent = probe.value.gpuHoursPerHour;
    if (Math.abs(spent - budget) <= BUDGET_TOLERANCE * budget) return done(probe);
    if (spent > budget) over = probe;
    else under = probe;
  }
  const gOver = over.value.gpuHoursPerHour;
  const gUnder = under.value.gpuHoursPerHour;
  if (gUnder >= budget * (1 - BUDGET_TOLERANCE)) return done(under);
  // Share of arriving jobs on the cheaper plan so the mixture spends exactly the budget.
  const theta = (gOver - budget) / (gOver - gUnder);
  const plan = mixPlans(instance, over.plan, under.plan, theta);
  return { solver: 'exact', budget, plan, value: evaluateMixed(instance, plan), minFeasibleBudget };
}
