/**
 * The GPUs paid below the budget now, and why (core/below-budget.ts): what `GET /v1/budget` and
 * `boa budget get` show, so that a ledger under the budget says whether jobs wait, the plan leaves
 * GPUs running jobs could use, or nothing present can use more.
 */
import {
  belowBudget,
  type BelowBudget,
  type BelowBudgetInput,
  DEFAULT_MIN_MARGINAL_SPEEDUP,
  usableExtraGpus,
} from '../core/below-budget.ts';
import { epochSpeedups } from '../core/profile.ts';
import { heldToGpuHoursPerHour } from './budget.ts';
import { knownPaidGpus } from './paid-now.ts';
import { profilesInUse } from './profiles-in-use.ts';
import type { BoaService } from './service.ts';

/** What the split reads of the service now; `paidGpus` is the nodes paid for at this instant. */
export function belowBudgetInput(service: BoaService): BelowBudgetInput {
  const { state } = service;
  const classes = profilesInUse(service);
  let allocatedGpus = 0;
  let anyWaiting = false;
  let usableGpus = 0;
  for (const job of state.jobs.values()) {
    if (job.state === 'waiting') anyWaiting = true;
    if (job.state !== 'running') continue;
    allocatedGpus += job.width;
    const speedups = epochSpeedups(classes.get(job.className)?.profile, job.statEpoch);
    if (speedups) usableGpus += usableExtraGpus(speedups, job.width, DEFAULT_MIN_MARGINAL_SPEEDUP);
  }
  return {
    // GPUs above the node group's maximum are never paid, so never short (budget.ts).
    budgetGpus: state.budget ? heldToGpuHoursPerHour(state.budget) : 0,
    paidGpus: knownPaidGpus(state, service.deps.repo.ledger),
    allocatedGpus,
    anyWaiting,
    usableGpus,
  };
}

export function belowBudgetNow(service: BoaService): BelowBudget {
  return belowBudget(belowBudgetInput(service));
}
