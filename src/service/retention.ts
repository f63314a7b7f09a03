import { HALF_LIVES_READ } from './demand.ts';
import { historyReachMs } from './history.ts';
import type { BoaService } from './service.ts';
import type { ServiceConfig } from './config.ts';
import { LEDGER_PRUNED_BEFORE } from '../store/repository.ts';
import { logPruneFailure } from './pass-failure.ts';

const HOUR = 3_600_000;
/** How often old rows are pruned: often enough that tables stay small, rarely enough to cost nothing. */
export const PRUNE_EVERY_MS = HOUR;

/**
 * How far back ledger rows are kept: the longest span an estimate reads (the rate and budget windows,
 * the demand ratio's half-lives) plus a day of slack. The demand ratio reads allocation samples back
 * 5 half-lives: with one over 9.6 hours it read past what was kept, and each prune moved it.
 */
export function ledgerKeptMs(
  config: Pick<ServiceConfig, 'rateWindowHours' | 'budgetWindowHours' | 'demandHalfLifeHours'>,
): number {
  const demandHours = HALF_LIVES_READ * config.demandHalfLifeHours;
  return (Math.max(config.rateWindowHours, config.budgetWindowHours, demandHours) + 24) * HOUR;
}

/**
 * Deletes rows no estimate can read any more: older than ledgerKeptMs, so an operator can still look
 * at yesterday. Returns how many rows went.
 */
export function pruneOldRows(service: BoaService): number {
  const { config, repo, clock, logger } = service.deps;
  const now = clock.now();
  const deleted =
    repo.pruneBefore(now - ledgerKeptMs(config), now) +
    repo.history.pruneBefore(now - historyReachMs(config) - 24 * HOUR);
  service.state.ledgerSince = Math.max(
    service.state.startedAt,
    repo.getSetting<number>(LEDGER_PRUNED_BEFORE) ?? 0,
  );
  if (deleted > 0) logger.info({ event: 'pruned', rows: deleted }, 'old rows pruned');
  return deleted;
}

/**
 * Deletes the kept logs of jobs that ended more than `jobLogRetentionDays` ago, so a data folder does not
 * fill its disk with every rescale's logs (up to 1 MiB a pod on Kubernetes). A folder of a job the store
 * does not know is left alone. Returns how many jobs' logs went.
 */
export function pruneJobLogs(service: BoaService): number {
  const { config, repo, clock, logger, executor } = service.deps;
  if (config.jobLogRetentionDays === 0 || !executor?.keptLogJobs || !executor.deleteKeptLogs) return 0;
  const before = clock.now() - config.jobLogRetentionDays * 24 * HOUR;
  let deleted = 0;
  for (const jobId of executor.keptLogJobs()) {
    if (service.state.jobs.has(jobId)) continue;
    const row = repo.getJob(jobId);
    const ended = row !== undefined && row.state !== 'waiting' && row.state !== 'running';
    if (!ended || row.finishedAt === null || row.finishedAt >= before) continue;
    if (executor.deleteKeptLogs(jobId)) deleted += 1;
  }
  if (deleted > 0)
    logger.info(
      { event: 'job_logs_pruned', jobs: deleted, retentionDays: config.jobLogRetentionDays },
      'logs of jobs ended long ago deleted',
    );
  return deleted;
}

/**
 * The hourly pruning: old rows, then old jobs' logs, each on its own (a disk refusing the rows' delete
 * still lets the logs go, which frees it). A failure is logged as a failed tick is: the file, SQLite's
 * code and what to do.
 */
export function pruneAll(service: BoaService, storeFile: string): void {
  for (const prune of [pruneOldRows, pruneJobLogs]) {
    try {
      prune(service);
    } catch (error) {
      logPruneFailure(service.deps.logger, error, storeFile);
    }
  }
}
