import type { ClassProfile } from '../core/profile.ts';
import type { Repository } from '../store/repository.ts';
import { budgetBelowFloor } from './budget-floor.ts';
import { ConfigError, type ServiceConfig } from './config.ts';

/** How an operator gives the starting budget, for the messages that name it. */
export const BUDGET_SETTING = 'budget in the config file, BOA_BUDGET or --budget';

/**
 * The starting budget (config `budget`), stored at the first start only, must pass the check
 * PUT /v1/budget makes (its upper bound is the schema's): a budget below what one job of the cheapest
 * class needs started, and the job waited for the budget for ever (found in a newcomer trial).
 * Checked before anything is written; `classes` are the profiles a new data dir is seeded with.
 */
export function checkStartingBudget(
  config: ServiceConfig,
  repo: Repository,
  classes: readonly ClassProfile[],
): void {
  if (config.budget === undefined || repo.getSetting('budget') !== undefined) return;
  const stored = repo.listClasses().map((c) => c.profile);
  const below = budgetBelowFloor(config.budget, stored.length > 0 ? stored : classes, config.gpusPerNode);
  if (below)
    throw new ConfigError(
      `starting budget (${BUDGET_SETTING}): ${below.message} Set it to at least ${below.leastPaid}, ` +
        'or leave it unset and set one later with `boa budget set`',
    );
}

/**
 * A stored budget wins over the configured one (set at the first start only): the line saying so,
 * or null when they agree or none is configured.
 */
export function ignoredStartingBudget(config: ServiceConfig, stored: number | undefined): string | null {
  if (config.budget === undefined || stored === undefined || stored === config.budget) return null;
  return (
    `the configured budget ${config.budget} (${BUDGET_SETTING}) is ignored: the data dir holds ` +
    `budget ${stored}, set earlier, and the starting budget applies at the first start only. ` +
    'Change it with `boa budget set` (PUT /v1/budget)'
  );
}
