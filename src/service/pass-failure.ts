import type { Logger } from 'pino';
import { storeRefusal } from '../store/refusal.ts';

/** A pass the service runs on a timer, as its failure is logged. */
interface Pass {
  readonly event: string;
  readonly failed: string;
  readonly retried: string;
}

const TICK: Pass = { event: 'tick_failed', failed: 'tick failed', retried: 'the next tick tries again' };
const PRUNE: Pass = {
  event: 'prune_failed',
  failed: 'pruning failed',
  retried: 'the next pruning, in an hour, tries again',
};

/**
 * The log line of a pass that threw. A write the database refused (a lock, a full or failing disk, a
 * file system turned read-only) names the database's file and SQLite's code, and what to do; anything
 * else is boa's own error, with its stack: a programming error in a tick is otherwise one line with
 * nothing to find it by.
 */
function logPassFailure(logger: Logger, pass: Pass, error: unknown, storeFile: string): void {
  const { message, stack } = error as Error;
  const refused = storeRefusal(error, storeFile);
  if (refused) {
    logger.error(
      {
        event: pass.event,
        code: refused.code,
        file: storeFile,
        sqliteCode: refused.sqliteCode,
        error: message,
      },
      `${pass.failed}, its changes undone (${pass.retried}): ${refused.cause}; ${refused.fix}`,
    );
    return;
  }
  logger.error({ event: pass.event, error: message, stack }, pass.failed);
}

export const logTickFailure = (logger: Logger, error: unknown, storeFile: string) =>
  logPassFailure(logger, TICK, error, storeFile);

export const logPruneFailure = (logger: Logger, error: unknown, storeFile: string) =>
  logPassFailure(logger, PRUNE, error, storeFile);
