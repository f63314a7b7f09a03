import type { PlanValue } from '../evaluate.ts';
import type { MixedPlan } from '../plan.ts';

export type SolverName = 'exact' | 'paper';

/** What a width calculator returns for one budget. */
export interface Solution {
  readonly solver: SolverName;
  readonly budget: number;
  readonly plan: MixedPlan;
  /** The plan's own value from the evaluator (Lemma 4.8), rescale costs included. */
  readonly value: PlanValue;
  readonly minFeasibleBudget: number;
}
