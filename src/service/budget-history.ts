import type { BudgetSetting } from './state.ts';

/** One budget value over the part of [from, to] it was in force. */
export interface BudgetSpan {
  readonly from: number;
  readonly to: number;
  readonly gpuHoursPerHour: number;
}

/**
 * The budgets in force over [from, to], oldest first, from the stored setting: its earlier values (kept
 * while in force within a window) and the current one. Before the oldest kept value was set nothing is
 * said (no budget yet, or a value older than a window before the last change).
 */
export function budgetSpans(budget: BudgetSetting | undefined, from: number, to: number): BudgetSpan[] {
  if (!budget) return [];
  const values = [
    ...(budget.earlier ?? []),
    { gpuHoursPerHour: budget.gpuHoursPerHour, setAt: budget.setAt },
  ];
  const spans: BudgetSpan[] = [];
  values.forEach((value, i) => {
    const start = Math.max(from, value.setAt);
    const end = Math.min(to, values[i + 1]?.setAt ?? to);
    if (end > start) spans.push({ from: start, to: end, gpuHoursPerHour: value.gpuHoursPerHour });
  });
  return spans;
}
