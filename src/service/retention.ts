import { historyReachMs } from './history.ts';
import type { BoaService } from './service.ts';
import type { ServiceConfig } from './config.ts';

const HOUR = 3_600_000;
/** How often old rows are pruned: often enough that tables stay small, rarely enough to cost nothing. */
export const PRUNE_EVERY_MS = HOUR;

/** How far back ledger rows are kept: the longest window (rates, budget) plus a day of slack. */
export function ledgerKeptMs(config: Pick<ServiceConfig, 'rateWindowHours' | 'budgetWindowHours'>): number {
  return (Math.max(config.rateWindowHours, config.budgetWindowHours) + 24) * HOUR;
}

/**
 * Deletes rows no estimate can read any more: older than ledgerKeptMs, so an operator can still look
 * at yesterday. Returns how many rows went.
 */
export function pruneOldRows(service: BoaService): number {
  const { config, repo, clock, logger } = service.deps;
  const keepMs = ledgerKeptMs(config);
  const deleted =
    repo.pruneBefore(clock.now() - keepMs) +
    repo.history.pruneBefore(clock.now() - historyReachMs(config) - 24 * HOUR);
  if (deleted > 0) logger.info({ event: 'pruned', rows: deleted }, 'old rows pruned');
  return deleted;
}
