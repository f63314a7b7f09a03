import { StoreError } from './errors.ts';

/**
 * SQLite's "database is locked": another connection holds a lock longer than the busy timeout (5 s). At
 * start that is an operator's sqlite3 shell in a write transaction or in exclusive locking mode, or a
 * boa on the same file from another data dir path or host. Told apart from damage, whose advice
 * (restore the backup, or --init, which moves the file aside) would be wrong for a sound file in use.
 */
export function isLocked(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && /^SQLITE_(BUSY|LOCKED)/.test(code);
}

/** The refusal of a start on a locked file: nothing was changed. */
export function lockedRefusal(file: string): StoreError {
  return new StoreError(
    `${file} is locked by another process (SQLite: database is locked, still after waiting 5 s): close the other program using it (an sqlite3 shell with a transaction open or in exclusive locking mode, or another boa running on this file) and start again; nothing was changed`,
  );
}
