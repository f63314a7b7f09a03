import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { StoreError } from './errors.ts';
import { fsCause, openProblem } from './writable.ts';

export interface DataDirLock {
  release(): void;
}

/**
 * How long a start waits for the lock before it is refused. Two services started at the same instant
 * need only as long as the loser takes to let go of its read lock (microseconds; a loaded machine may
 * hold it up for some milliseconds); a second service next to a running one is refused after this,
 * quickly enough for someone at a terminal.
 */
export const LOCK_WAIT_MS = 1000;

/**
 * One service per data directory. The lock is an exclusive SQLite lock on `boa.lock` (an fcntl lock
 * underneath), held for the life of the process: the kernel drops it when the process dies, even by
 * kill -9, so a stale lock never blocks a restart. `boa.pid` only names the holder in the message: its
 * pid and host, since a data dir on shared storage, or in another container, may be held by a process
 * whose pid means nothing (or another process) here.
 */
export function lockDataDir(dataDir: string, waitMs = LOCK_WAIT_MS): DataDirLock {
  const lockFile = join(dataDir, 'boa.lock');
  const pidFile = join(dataDir, 'boa.pid');
  let lock: Database.Database;
  try {
    lock = new Database(lockFile, { timeout: waitMs });
  } catch (error) {
    throw new StoreError(`cannot lock data dir ${dataDir}: ${whyNotOpened(error, lockFile)}`);
  }
  try {
    // The write lock in one step, in SQLite's normal locking mode, where a try that finds the lock
    // taken lets go of its read lock before it waits: of two starts at one instant, one gets the lock.
    // (In EXCLUSIVE locking mode each kept the read lock the other needed gone, and both were refused.)
    // The transaction is never committed: the lock is held until release, or the process's end.
    lock.exec('BEGIN EXCLUSIVE');
  } catch (error) {
    lock.close();
    if ((error as { code?: string }).code === 'SQLITE_BUSY') {
      throw new StoreError(
        `data dir ${dataDir} is in use by another boa service (${holder(pidFile)}): stop that one first, or give this one its own --data`,
      );
    }
    throw new StoreError(`cannot lock data dir ${dataDir} (${lockFile}): ${(error as Error).message}`);
  }
  try {
    writeFileSync(pidFile, `${process.pid} ${hostname()}\n`);
  } catch (error) {
    // Let go, or this process would hold the data dir with no service on it (a full disk, found in review).
    lock.close();
    throw new StoreError(`cannot lock data dir ${dataDir}: ${pidFile} is ${fsCause(error)}`);
  }
  return {
    release() {
      rmSync(pidFile, { force: true });
      lock.close();
    },
  };
}

/**
 * Why SQLite could not open the lock file. The lock is the first SQLite database a start opens, so a
 * driver that cannot load (its native binding missing, or built for another Node) fails here, and once
 * read as a problem of the file: "boa.lock is Could not locate the bindings file" (found in review).
 */
function whyNotOpened(error: unknown, lockFile: string): string {
  const { code, message } = error as NodeJS.ErrnoException;
  // A module missing while the driver loads (its `bindings` helper, say) can only be the driver's.
  const loading = code === 'ERR_DLOPEN_FAILED' || code === 'MODULE_NOT_FOUND';
  if (loading || /could not locate the bindings file/i.test(message)) {
    // On one line, without the list of every path the bindings package tried, or Node's require stack.
    const reason = message
      .replace(/\s*(Tried|Require stack):[\s\S]*$/, '')
      .replace(/\s+/g, ' ')
      .trim()
      .replace(/\.$/, '');
    return `the SQLite driver (better-sqlite3) failed to load: ${reason}; reinstall boa's dependencies with npm ci, under the Node that runs boa (${process.version})`;
  }
  // SQLite's "unable to open database file" names neither the file nor why (found in a trial).
  const fileProblem = openProblem(lockFile);
  if (fileProblem) return `${lockFile} is ${fileProblem}`;
  return `SQLite cannot open ${lockFile}: ${message}`;
}

function holder(pidFile: string): string {
  try {
    const [pid, host] = readFileSync(pidFile, 'utf8').trim().split(/\s+/);
    if (!/^\d+$/.test(pid ?? '')) return 'pid unknown';
    // A pid file from before the host was written names the pid alone.
    return host ? `pid ${pid} on host ${host}` : `pid ${pid}`;
  } catch {
    return 'pid unknown';
  }
}
