/**
 * The budget a plan is made with, one rule for the service and the simulator: the control's budget
 * (the budget corrected for paid/allocated overhead), times the warm-up's factor (core/warmup.ts) and
 * the credit's (core/credit.ts), within the plan cap (core/plan-cap.ts). With a credit, the control's
 * budget is first raised to the load's minimum: under a load that needs more than the budget the credit
 * then widens the cheapest plan, not a budget below it that the calculator's floor overrides (measured
 * at matched paid spend: docs/budget.md, credit). The ceiling still bounds what is paid.
 */
import { type CreditOptions, creditFactor } from './credit.ts';
import { type PlanCapOptions, planBudgetCap } from './plan-cap.ts';

export interface PlanningBudgetInput {
  /** The budget's GPU-hours per hour. */
  readonly budget: number;
  /** The budget the control plans with before the factors below (overhead corrected). */
  readonly controlBudget: number;
  /** Below 1 during the opt-in warm-up. */
  readonly warmupFactor: number;
  /** The minimum feasible budget of the load the plan is made for. */
  readonly loadNeeds: number;
  /** GPU-hours the window has left unspent so far; negative: debt. */
  readonly unspentGpuHours: number;
  /**
   * The window's whole shortfall (-debt), which the plan cap's relaxing reads (plan-inputs.ts planCap);
   * `unspentGpuHours` when absent (a budget that never changed: the same).
   */
  readonly shortfallGpuHours?: number;
}

export interface PlanningBudgetRules {
  /** null: no credit. */
  readonly credit: CreditOptions | null;
  /** null: no cap. */
  readonly planCap: PlanCapOptions | null;
}

/**
 * The plan's budget, and what it would be without the cap; where the credit raised a control's budget
 * below the load's minimum to it, also `unraised`, the plan's budget without that raise: below the
 * minimum, the credit does not pay for the cheapest plan and jobs wait for the budget.
 */
export function planningBudget(
  input: PlanningBudgetInput,
  rules: PlanningBudgetRules,
): { planned: number; uncapped: number; unraised?: number } {
  const { budget, loadNeeds, unspentGpuHours } = input;
  const credit = rules.credit ? creditFactor({ budget, loadNeeds, unspentGpuHours }, rules.credit) : 1;
  const base = credit > 1 ? Math.max(loadNeeds, input.controlBudget) : input.controlBudget;
  const uncapped = base * input.warmupFactor * credit;
  const cap = rules.planCap
    ? planBudgetCap(
        { budget, minFeasibleBudget: loadNeeds, unspentGpuHours: input.shortfallGpuHours ?? unspentGpuHours },
        rules.planCap,
      )
    : Number.POSITIVE_INFINITY;
  const planned = Math.min(uncapped, cap);
  if (!(credit > 1 && input.controlBudget < loadNeeds)) return { planned, uncapped };
  return { planned, uncapped, unraised: Math.min(input.controlBudget * input.warmupFactor * credit, cap) };
}
