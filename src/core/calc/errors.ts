/** A budget below what any plan can spend: carries the minimum so callers can state it. */
export class BudgetTooLowError extends Error {
  override name = 'BudgetTooLowError';
  constructor(
    readonly budget: number,
    readonly minFeasibleBudget: number,
  ) {
    super(
      `budget ${formatBudget(budget)} GPU-hours/hour is below the minimum feasible budget ` +
        `${formatBudget(minFeasibleBudget)} for these arrival rates (every job on its cheapest widths)`,
    );
  }
}

function formatBudget(b: number): string {
  return Number.isFinite(b) ? b.toPrecision(6) : String(b);
}

/** Budgets are compared with a relative tolerance: adjacent hull vertices can differ by 0.06%. */
export const BUDGET_TOLERANCE = 1e-9;

export function withinBudget(spent: number, budget: number): boolean {
  return spent <= budget * (1 + BUDGET_TOLERANCE);
}
