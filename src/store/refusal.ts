import { dirname } from 'node:path';
import { isLocked } from './busy.ts';
import { unwritable } from './writable.ts';

/** A write the database refused for its own state (the disk, another process), not for boa's. */
export interface StoreRefusal {
  /** The API's error code. */
  readonly code: 'store_busy' | 'store_full' | 'store_read_only' | 'store_io_error';
  /** What happened, with SQLite's code. */
  readonly cause: string;
  /** What to do. */
  readonly fix: string;
  /** For the answer to a request: the cause, the request refused, and what to do. */
  readonly message: string;
  /** SQLite's own code (extended: SQLITE_IOERR_WRITE), for the log. */
  readonly sqliteCode: string;
}

/**
 * Why the database at `file` refused a write, when it is the database's state, not boa's (SqliteError
 * codes, by family: SQLite gives extended codes such as SQLITE_BUSY_SNAPSHOT or SQLITE_IOERR_FSYNC).
 * The write's transaction was rolled back.
 */
export function storeRefusal(error: unknown, file: string): StoreRefusal | undefined {
  const code = (error as { code?: unknown }).code;
  if (!(error instanceof Error) || error.name !== 'SqliteError' || typeof code !== 'string') return undefined;
  const refusal = (kind: StoreRefusal['code'], cause: string, fix: string): StoreRefusal => ({
    code: kind,
    cause,
    fix,
    message: `${cause}: this request was refused; ${fix}`,
    sqliteCode: code,
  });
  if (isLocked(error))
    return refusal(
      'store_busy',
      `the database is locked by another process (${code}), such as a sqlite3 shell or a backup ` +
        'holding a write transaction',
      'try again once it is released',
    );
  if (code === 'SQLITE_FULL')
    return refusal(
      'store_full',
      `the disk holding the database is full (${code})`,
      'free space on it and try again',
    );
  const readOnly = (cause: string) =>
    refusal(
      'store_read_only',
      `the database cannot be written (${code}: ${cause})`,
      'make it writable and try again',
    );
  // Which folder or file cannot be written, and why, when the file system says.
  const unwritableNow = () => (file === ':memory:' ? undefined : whyUnwritable(file));
  if (code.startsWith('SQLITE_READONLY'))
    return readOnly(unwritableNow() ?? 'a read-only file system, or a file boa may not write');
  if (code.startsWith('SQLITE_IOERR')) {
    // A file system remounted read-only while boa runs (ext4's errors=remount-ro) fails SQLite's writes
    // with an I/O error (EROFS), not SQLITE_READONLY, which it gives only when opened on one: told apart here.
    const cause = unwritableNow();
    if (cause !== undefined) return readOnly(cause);
    return refusal(
      'store_io_error',
      `the disk failed a read or write of the database (${code}: ${error.message})`,
      "check the disk and its file system (the kernel's log, dmesg) and try again once it is sound; " +
        'the service log names the file',
    );
  }
  return undefined;
}

/** Why the database's folder or files cannot be written now, or undefined when they can. */
function whyUnwritable(file: string): string | undefined {
  for (const path of [dirname(file), file, `${file}-wal`]) {
    const problem = unwritable(path);
    if (problem !== undefined) return `${path} is ${problem}`;
  }
  return undefined;
}
