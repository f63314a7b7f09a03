import type { Logger } from 'pino';
import { storeRefusal } from '../store/refusal.ts';

/**
 * The log line of a tick that threw. A write the database refused (a lock, a full or failing disk, a
 * file system turned read-only) names the database's file and SQLite's code, and what to do; anything
 * else is boa's own error, with its stack: a programming error in a tick is otherwise one line with
 * nothing to find it by.
 */
export function logTickFailure(logger: Logger, error: unknown, storeFile: string): void {
  const { message, stack } = error as Error;
  const refused = storeRefusal(error, storeFile);
  if (refused) {
    logger.error(
      {
        event: 'tick_failed',
        code: refused.code,
        file: storeFile,
        sqliteCode: refused.sqliteCode,
        error: message,
      },
      `tick failed, its changes undone (the next tick tries again): ${refused.cause}; ${refused.fix}`,
    );
    return;
  }
  logger.error({ event: 'tick_failed', error: message, stack }, 'tick failed');
}
