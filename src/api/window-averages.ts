import type { BoaService } from '../service/service.ts';
import { budgetWindowFloor } from '../service/budget.ts';

/**
 * Paid and allocated GPU-hours per hour over the budget window as the overspend alarm reads it
 * (CloudWatch's PaidGpuHoursPerHourAverage): a new budget starts the window anew, so after a cut the
 * hours paid at the old budget are not judged by the new one.
 */
export function budgetWindowAverages(service: BoaService) {
  const { state, deps } = service;
  const now = deps.clock.now();
  const floor = state.budget ? budgetWindowFloor(service, state.budget) : state.startedAt;
  return service.ledgerAverages(Math.max(now - deps.config.budgetWindowHours * 3_600_000, floor), now);
}
