import { BudgetTooLowError } from '../../core/calc/errors.ts';
import { solveExact } from '../../core/calc/exact.ts';
import { computeFrontier } from '../../core/calc/frontier.ts';
import { LagrangianSolver } from '../../core/calc/lagrangian.ts';
import { solvePaper } from '../../core/calc/paper.ts';
import type { PlanValue } from '../../core/evaluate.ts';
import { buildInstance, type Instance } from '../../core/instance.ts';
import type { MixedPlan } from '../../core/plan.ts';
import type { ClassProfile, ProfileFile } from '../../core/profile.ts';

/** Everything a plan is computed from; stored beside the plan so it can be explained later. */
export interface PlanInputs {
  readonly classes: readonly ClassProfile[];
  readonly ratesPerHour: Readonly<Record<string, number>>;
  /** The operator's budget, GPU-hours per hour. */
  readonly budget: number;
  /** The budget given to the calculator: the target divided by the paid/allocated overhead. */
  readonly planningBudget: number;
  /** The planning budget without the plan cap, when the cap held it down. */
  readonly uncappedBudget?: number;
  /**
   * The planning budget without the credit's raise of a budget below the load's minimum to it, when it
   * was raised (core/planning-budget.ts): below the minimum, the credit widens the cheapest plan but
   * does not pay for it, and jobs wait for the budget.
   */
  readonly unraisedBudget?: number;
  /** GPU-time allocated over what the plans in force expected (service/demand.ts); 1 when not used. */
  readonly demandRatio?: number;
  readonly solver: 'exact' | 'paper';
  readonly gpusPerNode: number;
  /** The most GPUs one job can get: the node group's maximum; widths above it are not planned. */
  readonly maxWidth?: number;
}

/** What the calculator needs to build its problem: the classes, their rates and the cluster's shape. */
export type PlanProblem = Pick<PlanInputs, 'classes' | 'ratesPerHour' | 'gpusPerNode' | 'maxWidth'>;

export interface PlanResult {
  readonly plan: MixedPlan;
  readonly value: PlanValue;
  readonly minFeasibleBudget: number;
  /**
   * True when the planning budget was below the minimum and the cheapest plan was used instead, or
   * the credit raised it to the minimum without paying for it (the cheapest plan, widened by the credit).
   */
  readonly clampedToMinimum: boolean;
  readonly solveMs: number;
}

/** Classes with no arrivals yet still get widths: a negligible rate keeps them out of the budget. */
const NEGLIGIBLE_RATE = 1e-6;

export function instanceOf(inputs: PlanProblem): Instance {
  const profile: ProfileFile = {
    version: 1,
    instanceType: 'service',
    gpusPerNode: inputs.gpusPerNode,
    classes: [...inputs.classes],
  };
  const rates = Object.fromEntries(
    inputs.classes.map((c) => [c.name, Math.max(NEGLIGIBLE_RATE, inputs.ratesPerHour[c.name] ?? 0)]),
  );
  return buildInstance(profile, rates, { maxWidth: inputs.maxWidth });
}

/**
 * How long the paper's solver draws configurations before it answers its best so far (or the exact
 * solver answers): well within the worker's 5 minutes, which the largest profiles passed (a class of
 * 1000 epochs x 1024 widths: 78 s on a quiet machine; the exact solver 2.3 s).
 */
export const PAPER_SOLVER_MS = 120_000;

export function computePlan(inputs: PlanInputs, now: () => number = () => performance.now()): PlanResult {
  const start = now();
  const instance = instanceOf(inputs);
  const minFeasibleBudget = new LagrangianSolver(instance).cheapest().value.gpuHoursPerHour;
  const budget = Math.max(inputs.planningBudget, minFeasibleBudget);
  const outOfTime = () => now() - start > PAPER_SOLVER_MS;
  const solution =
    inputs.solver === 'paper'
      ? (solvePaper(instance, budget, { outOfTime }) ?? solveExact(instance, budget))
      : solveExact(instance, budget);
  return {
    plan: solution.plan,
    value: solution.value,
    minFeasibleBudget,
    // Found trying boa as a newcomer: a budget of 40 against a minimum of 126.6 (history imported), with
    // a little credit, planned 128.2 and neither `boa plan` nor the dashboard said jobs would wait.
    clampedToMinimum: (inputs.unraisedBudget ?? inputs.planningBudget) < minFeasibleBudget,
    solveMs: now() - start,
  };
}

/** The minimum feasible budget for the given estimates; throws BudgetTooLowError below it (if `strict`). */
export function checkBudget(inputs: PlanProblem, budget: number, strict = true) {
  const minimum = new LagrangianSolver(instanceOf(inputs)).cheapest().value.gpuHoursPerHour;
  if (strict && budget < minimum * (1 - 1e-9)) throw new BudgetTooLowError(budget, minimum);
  return minimum;
}

export function frontierOf(inputs: PlanProblem) {
  return computeFrontier(instanceOf(inputs)).vertices.map((v) => v.value);
}
