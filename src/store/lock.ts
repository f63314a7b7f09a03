import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { StoreError } from './errors.ts';

export interface DataDirLock {
  release(): void;
}

/**
 * One service per data directory. The lock is an exclusive SQLite lock on `boa.lock` (an fcntl lock
 * underneath), held for the life of the process: the kernel drops it when the process dies, even by
 * kill -9, so a stale lock never blocks a restart. `boa.pid` only names the holder in the message.
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
  writeFileSync(pidFile, `${process.pid}\n`);
  return {
    release() {
      rmSync(pidFile, { force: true });
      lock.close();
    },
  };
}

function holder(pidFile: string): string {
  try {
    const pid = Number.parseInt(readFileSync(pidFile, 'utf8'), 10);
    return Number.isInteger(pid) ? `pid ${pid}` : 'pid unknown';
  } catch {
    return 'pid unknown';
  }
}
