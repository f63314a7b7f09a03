/**
 * The GPUs paid below the budget now, and why (core/below-budget.ts): what `GET /v1/budget` and
 * `boa budget get` show, so that a ledger under the budget says whether jobs wait, the plan leaves
 * GPUs running jobs could use, or nothing present can use more.
 */
import {
  belowBudget,
  type BelowBudget,
  DEFAULT_MIN_MARGINAL_SPEEDUP,
  usableExtraGpus,
} from '../core/below-budget.ts';
import { epochSpeedups } from '../core/profile.ts';
import type { ServiceState } from './state.ts';

export function belowBudgetNow(state: ServiceState): BelowBudget {
  let paidGpus = 0;
  // Billing starts at EC2 running, as in the ledger: a pending instance is not paid for yet.
  for (const node of state.nodes) if (node.billed !== false) paidGpus += node.gpus;
  let allocatedGpus = 0;
  let anyWaiting = false;
  let usableGpus = 0;
  for (const job of state.jobs.values()) {
    if (job.state === 'waiting') anyWaiting = true;
    if (job.state !== 'running') continue;
    allocatedGpus += job.width;
    const speedups = epochSpeedups(state.classes.get(job.className)?.profile, job.statEpoch);
    if (speedups) usableGpus += usableExtraGpus(speedups, job.width, DEFAULT_MIN_MARGINAL_SPEEDUP);
  }
  return belowBudget({
    budgetGpus: state.budget?.gpuHoursPerHour ?? 0,
    paidGpus,
    allocatedGpus,
    anyWaiting,
    usableGpus,
  });
}
