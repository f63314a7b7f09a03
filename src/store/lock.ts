import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { StoreError } from './errors.ts';

export interface DataDirLock {
  release(): void;
}

/**
 * One service per data directory. The lock is an exclusive SQLite lock on `boa.lock` (an fcntl lock
 * underneath), held for the life of the process: the kernel drops it when the process dies, even by
 * kill -9, so a stale lock never blocks a restart. `boa.pid` only names the holder in the message: its
 * pid and host, since a data dir on shared storage, or in another container, may be held by a process
 * whose pid means nothing (or another process) here.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  const lockFile = join(dataDir, 'boa.lock');
  const pidFile = join(dataDir, 'boa.pid');
  const lock = new Database(lockFile, { timeout: 0 });
  try {
    lock.pragma('locking_mode = EXCLUSIVE');
    // The first write takes the exclusive lock; in EXCLUSIVE mode it is kept until close.
    lock.exec('CREATE TABLE IF NOT EXISTS holder (pid INTEGER NOT NULL); DELETE FROM holder;');
    lock.prepare('INSERT INTO holder (pid) VALUES (?)').run(process.pid);
  } catch (error) {
    lock.close();
    if ((error as { code?: string }).code === 'SQLITE_BUSY') {
      throw new StoreError(
        `data dir ${dataDir} is in use by another boa service (${holder(pidFile)}): stop that one first, or give this one its own --data`,
      );
    }
    throw new StoreError(`cannot lock data dir ${dataDir} (${lockFile}): ${(error as Error).message}`);
  }
  writeFileSync(pidFile, `${process.pid} ${hostname()}\n`);
  return {
    release() {
      rmSync(pidFile, { force: true });
      lock.close();
    },
  };
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
