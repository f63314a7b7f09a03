import {
  closeSync,
  existsSync,
  fsyncSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statfsSync,
  statSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { isLocked, lockedRefusal } from './busy.ts';
import { databaseProblem } from './checks.ts';
import { StoreError } from './errors.ts';

/** Copies kept from before migrations: the newest few, enough for a rollback or two. */
export const COPIES_KEPT = 3;

/** Room kept free beyond a copy's size, for the migrations that follow it. */
const COPY_MARGIN_BYTES = 64 * 1024 * 1024;

interface Migration {
  when: number;
  tag: string;
}

export interface KeptCopy {
  /** Where the copy is: `<file>.at-<tag>`. */
  path: string;
  /** The last migration the copy has. */
  tag: string;
  /** The migrations about to be applied to the file. */
  pending: string[];
}

/**
 * A copy of `file` as it is now, kept before the migrations this version has and it lacks are
 * applied: a version that fails after the upgrade can be rolled back to it. Named after the copy's
 * last migration (`boa.sqlite.at-0009_...`), the one name the older version knows and can look for.
 * Nothing is copied for a database with no migration applied (new, nothing to lose) or none pending.
 * Written under a temporary name and renamed once on disk, so a copy cut short by a crash or a full
 * disk is never taken for a good one; a copy that cannot be written stops the start before migrating.
 */
export function keepCopyBeforeMigrating(
  file: string,
  journalFile: string,
  freeBytes: (dir: string) => number = freeBytesIn,
): KeptCopy | undefined {
  const migrations = journal(journalFile);
  const db = new Database(file, { fileMustExist: true });
  try {
    const newest = newestApplied(db);
    if (newest === undefined) return undefined;
    const pending = migrations.filter((m) => m.when > newest).map((m) => m.tag);
    if (pending.length === 0) return undefined;
    const tag = migrations.filter((m) => m.when <= newest).at(-1)?.tag ?? String(newest);
    const path = copyPath(file, tag);
    const partial = `${path}.partial`;
    // Pruned first: with the newest kept and the new one, the volume holds the database and COPIES_KEPT
    // copies at most, never one more while the new copy is written.
    pruneCopies(file, COPIES_KEPT - 1, path);
    checkRoom(file, freeBytes(dirname(file)));
    try {
      // A partial copy left by a crash mid-copy. Created owner-only: the copy holds every job's env.
      rmSync(partial, { force: true });
      closeSync(openSync(partial, 'wx', 0o600));
      db.prepare('VACUUM INTO ?').run(partial);
      fsync(partial);
      renameSync(partial, path);
      fsync(dirname(file));
    } catch (error) {
      // Leave no partial copy behind; one that is not a plain file (what failed) is not boa's to remove.
      try {
        if (statSync(partial).isFile()) rmSync(partial);
      } catch {
        // Absent or unremovable: nothing more to do here.
      }
      if (isLocked(error)) throw lockedRefusal(file);
      const code = (error as { code?: string }).code;
      const fix =
        code === 'ENOSPC' || code === 'SQLITE_FULL'
          ? `free space in ${dirname(file)} (the copy needs about the database's size)`
          : 'fix that';
      throw new StoreError(
        `cannot keep a copy of ${file} before migrating it (${reason(error)}): nothing was migrated; ${fix} and start again`,
      );
    }
    return { path, tag, pending };
  } finally {
    db.close();
  }
}

/**
 * The copy this version can run, for a file a newer boa migrated: the one at this version's last
 * migration, and sound. Undefined when there is none.
 */
export function copyForThisVersion(file: string, journalFile: string): string | undefined {
  const last = journal(journalFile).at(-1);
  if (!last) return undefined;
  const path = copyPath(file, last.tag);
  if (!existsSync(path) || databaseProblem(path, journalFile) !== undefined) return undefined;
  return path;
}

export function copyPath(file: string, tag: string): string {
  return `${file}.at-${tag}`;
}

/**
 * The copies of `file` kept before migrations that this version can start from (an older schema or its
 * own, not damaged), newest first: a way back for a database that is refused, besides the backup.
 */
export function soundCopies(file: string, journalFile: string): Array<{ path: string; written: Date }> {
  return copiesOf(file)
    .filter((copy) => {
      try {
        return databaseProblem(copy.path, journalFile) === undefined;
      } catch {
        return false; // locked by another process: not one to offer now
      }
    })
    .map((copy) => ({ path: copy.path, written: new Date(copy.written) }));
}

/** Keeps the newest `kept` copies of `file` but `except` (by when they were written), deletes the others. */
function pruneCopies(file: string, kept: number, except: string): void {
  const copies = copiesOf(file).filter((copy) => copy.path !== except);
  for (const old of copies.slice(kept)) {
    for (const suffix of ['', '-wal', '-shm']) rmSync(old.path + suffix, { force: true });
  }
}

/** `<file>.at-<tag>` beside `file`, newest first by when they were written. */
function copiesOf(file: string): Array<{ path: string; written: number }> {
  const dir = dirname(file);
  const prefix = `${basename(file)}.at-`;
  return readdirSync(dir)
    .filter((name) => name.startsWith(prefix) && /^\w+$/.test(name.slice(prefix.length)))
    .map((name) => ({ path: join(dir, name), written: statSync(join(dir, name)).mtimeMs }))
    .sort((a, b) => b.written - a.written);
}

/**
 * Refuses a copy the volume has no room for, before writing any of it: the database and its log, and a
 * margin for the migrations that follow (they grow the log). A full volume stops SQLite's commits too.
 */
function checkRoom(file: string, free: number): void {
  const size = [file, `${file}-wal`].reduce((sum, f) => sum + (existsSync(f) ? statSync(f).size : 0), 0);
  const needed = size + Math.max(COPY_MARGIN_BYTES, Math.ceil(size / 10));
  if (free >= needed) return;
  throw new StoreError(
    `cannot keep a copy of ${file} before migrating it: it needs about ${needed} bytes (the database's ${size} and a margin) and ${dirname(file)} has ${free} free; nothing was migrated; free space there (older copies ${basename(file)}.at-*, .newer-* and .broken-* files, jobs/ logs) and start again`,
  );
}

/**
 * Free bytes for boa in `dir`; unbounded when the file system does not say (statfs failing, or a volume
 * reporting no blocks at all, as some FUSE and network drivers do): then the copy's own ENOSPC decides.
 */
export function freeBytesIn(dir: string): number {
  try {
    const fs = statfsSync(dir);
    return fs.blocks > 0 ? fs.bavail * fs.bsize : Number.POSITIVE_INFINITY;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

function newestApplied(db: Database.Database): number | undefined {
  const hasTable = db
    .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'")
    .get();
  if (!hasTable) return undefined;
  const newest = db.prepare('SELECT max(created_at) FROM __drizzle_migrations').pluck().get();
  return newest === null || newest === undefined ? undefined : Number(newest);
}

function journal(journalFile: string): Migration[] {
  return (JSON.parse(readFileSync(journalFile, 'utf8')) as { entries: Migration[] }).entries;
}

function fsync(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function reason(error: unknown): string {
  const e = error as { code?: string; message?: string };
  return e.code && !e.message?.includes(e.code) ? `${e.code}: ${e.message}` : (e.message ?? String(error));
}
