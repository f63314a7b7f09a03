import {
  closeSync,
  existsSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { type BetterSQLite3Database, drizzle } from 'drizzle-orm/better-sqlite3';
import { isLocked, lockedRefusal } from './busy.ts';
import { databaseProblem } from './checks.ts';
import { applyMigrations } from './migrate.ts';
import {
  copyForThisVersion,
  copyPath,
  type KeptCopy,
  keepCopyBeforeMigrating,
  soundCopies,
} from './copies.ts';
import { StoreError } from './errors.ts';
import { keepJobIdsAbove, readJobIdMark } from './job-ids.ts';
import { type DataDirLock, lockDataDir } from './lock.ts';
import { fsCause, unwritable } from './writable.ts';
import { raiseCopyJobIds } from './rollback-ids.ts';
import * as schema from './schema.ts';

export type Db = BetterSQLite3Database<typeof schema> & { $client: Database.Database };

const MIGRATIONS = resolve(dirname(fileURLToPath(import.meta.url)), 'migrations');
const JOURNAL = join(MIGRATIONS, 'meta', '_journal.json');

export interface OpenOptions {
  /** Start fresh on purpose: a database that fails the checks is moved aside (kept), not refused. */
  init?: boolean;
  /** Called with the path a refused database was moved to under `init`. */
  onMovedAside?: (from: string, to: string) => void;
  /** Called once a copy of the database is kept before migrating it. */
  onCopied?: (copy: KeptCopy) => void;
  /**
   * BOA_ROLLBACK_TO_COPY: a database a newer boa migrated is moved aside (kept) and this version starts
   * from its copy from before that upgrade, if there is one; everything since the upgrade is left out.
   */
  rollbackToCopy?: boolean;
  /**
   * Called after a rollback to the copy: the newer file now at `newerAt`, `copy` now the database,
   * written at `copiedAt` (everything since is lost).
   */
  onRolledBack?: (newerAt: string, copy: string, copiedAt: Date) => void;
}

export interface Store {
  db: Db;
  /** Where the SQLite file lives (':memory:' in tests). */
  file: string;
  /** This start rolled back to a copy (BOA_ROLLBACK_TO_COPY): jobs since it may still have replicas. */
  rolledBack?: boolean;
  close(): void;
}

/**
 * Opens the service's data directory: checks it is a directory, locks it (one service per data dir),
 * refuses a database that exists but fails the checks (empty, not boa's, newer schema, damaged) with
 * one line naming the file and what to do, then applies the committed migrations. All of this
 * happens before the service touches anything else, so a refused start has no side effects.
 *
 * WAL keeps readers (the API) from blocking the tick's writes. synchronous=FULL: every commit (the
 * ledger's per-tick rows among them) is on disk before it is acknowledged, power cut included; in
 * WAL mode that is one fsync of the log per transaction, a few per minute here.
 */
export function openStore(dataDir: string | ':memory:', options: OpenOptions = {}): Store {
  if (dataDir === ':memory:') {
    const db = connect(':memory:');
    return { db, file: ':memory:', close: () => db.$client.close() };
  }
  prepareDir(dataDir);
  checkWritable(dataDir);
  const lock = lockDataDir(dataDir);
  try {
    const file = join(dataDir, 'boa.sqlite');
    let rolledBack = false;
    if (existsSync(file)) rolledBack = checkAndKeepCopy(file, options);
    const db = connect(file);
    const jobsDir = join(dataDir, 'jobs');
    keepJobIdsAbove(db.$client, Math.max(highestJobFolder(jobsDir), readJobIdMark(jobsDir)));
    return { db, file, rolledBack, close: () => closeAll(db, lock) };
  } catch (error) {
    lock.release();
    throw error;
  }
}

/**
 * The existing database's checks, then its rollback to this version's copy (a downgrade) or the copy kept
 * before migrating it; --init moves a refused one aside. True: rolled back.
 */
function checkAndKeepCopy(file: string, options: OpenOptions): boolean {
  let rolledBack = false;
  let problem = databaseProblem(file, JOURNAL);
  // A downgrade: the data is fine, only this version is too old to read it.
  if (problem?.startsWith('was written by a newer boa') && !options.init) {
    const copy = copyForThisVersion(file, JOURNAL);
    if (!copy || !options.rollbackToCopy) throw new StoreError(newerRefusal(file, problem, copy, options));
    // Rolled back first: an optional call (`?.`) would skip evaluating its arguments.
    const copiedAt = statSync(copy).mtime;
    const newerAt = rollBackTo(copy, file);
    rolledBack = true;
    options.onRolledBack?.(newerAt, copy, copiedAt);
    problem = databaseProblem(file, JOURNAL);
  }
  if (problem !== undefined) {
    if (!options.init) {
      throw new StoreError(
        `${file} ${problem}: restore it from the backup (docs/security.md)${copiesToRestore(file)}, or start fresh on purpose with --init (the file is then kept as ${file}.broken-<time>)`,
      );
    }
    // Moved first: an optional call (`?.`) would skip evaluating its arguments.
    const to = moveAside(file);
    options.onMovedAside?.(file, to);
  } else {
    // A lock another process takes after the checks (an sqlite3 shell opened just then) fails the copy's
    // read: refused as a lock the checks found is (nothing copied yet), not as SQLite's bare message.
    const copy = lockRefused(file, () => keepCopyBeforeMigrating(file, JOURNAL));
    if (copy) options.onCopied?.(copy);
  }
  return rolledBack;
}

/** `open`, with a lock held by another process refused as such (lockedRefusal). */
function lockRefused<T>(file: string, open: () => T): T {
  try {
    return open();
  } catch (error) {
    if (isLocked(error)) throw lockedRefusal(file);
    throw error;
  }
}

/** Kept for callers that need only the database (tests, tools): no lock, no checks. */
export function openDb(dataDir: string | ':memory:'): Db {
  if (dataDir !== ':memory:') mkdirSync(dataDir, { recursive: true });
  return connect(dataDir === ':memory:' ? ':memory:' : join(dataDir, 'boa.sqlite'));
}

function connect(file: string): Db {
  // Created owner-only, whatever the umask or the mode of a data dir that already existed: it keeps
  // every workload with its env (API keys included). SQLite gives its -wal and -shm files this mode too.
  const made = file !== ':memory:' && !existsSync(file);
  if (made) closeSync(openSync(file, 'a', 0o600));
  const client = new Database(file);
  let migrating = false;
  try {
    client.pragma('journal_mode = WAL');
    client.pragma('synchronous = FULL');
    client.pragma('foreign_keys = ON');
    client.pragma('busy_timeout = 5000');
    migrating = true;
    // One transaction for all pending migrations: a failure rolls every one of them back.
    applyMigrations(client, MIGRATIONS);
    return drizzle(client, { schema }) as Db;
  } catch (error) {
    client.close();
    // Locked by another process while migrating (or switching to WAL): SQLite changed nothing.
    if (!made && isLocked(error)) throw lockedRefusal(file);
    const cause = sqliteCause(error);
    const fix = /SQLITE_FULL|SQLITE_IOERR|ENOSPC/.test(cause)
      ? `free space in ${dirname(file)} and start again`
      : '';
    if (made) {
      // It holds nothing yet: left, a 0-byte file would be refused at the next start as an empty database.
      for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
      throw new StoreError(`cannot create ${file} (${cause}): ${fix || 'fix that and start again'}`);
    }
    if (!migrating) throw new StoreError(`${file} cannot be opened: ${cause}${fix && `: ${fix}`}`);
    throw new StoreError(
      `${file} cannot be migrated (${cause}): nothing was migrated, the file is as it was; ${fix || 'restore it from the backup (docs/security.md) if it fails again'}`,
    );
  }
}

/** SQLite's code and message, on one line. */
function sqliteCause(error: unknown): string {
  const { code, message } = error as { code?: unknown; message?: string };
  const text = (message ?? String(error)).replace(/\s+/g, ' ').trim();
  return typeof code === 'string' && !text.includes(code) ? `${code}: ${text}` : text;
}

function prepareDir(dataDir: string): void {
  if (existsSync(dataDir) && !statSync(dataDir).isDirectory()) {
    throw new StoreError(`--data ${dataDir} is a file; the data dir must be a directory`, 2);
  }
  try {
    // Owner-only, as the token in it: the database keeps every workload with its env (API keys
    // included) and the local executor the jobs' logs. A data dir that exists keeps its mode.
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new StoreError(`cannot create data dir ${dataDir}: ${createProblem(dataDir, error)}`, 2);
  }
}

/**
 * Why a data dir could not be made. Node's recursive mkdir answers ENOENT on a read-only file system (tried
 * on a read-only tmpfs), so then the nearest folder that exists says why.
 */
function createProblem(dataDir: string, error: unknown): string {
  if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return fsCause(error);
  let parent = dirname(resolve(dataDir));
  while (!existsSync(parent) && dirname(parent) !== parent) parent = dirname(parent);
  const problem = unwritable(parent);
  return problem === undefined ? fsCause(error) : `${parent} is ${problem}`;
}

/**
 * The data dir and the files boa writes in it must be writable by this process: checked before the
 * lock, so a data dir (or a copied database) boa may only read is refused naming the path and why, not
 * with SQLite's "unable to open database file" (found in a trial). A setting to fix: exit code 2.
 */
function checkWritable(dataDir: string): void {
  const dirProblem = unwritable(dataDir);
  if (dirProblem !== undefined)
    throw new StoreError(
      `data dir ${dataDir} is ${dirProblem}: boa writes its lock, database and job logs there; give the user boa runs as write access to it, or give another --data`,
      2,
    );
  for (const name of ['boa.lock', 'boa.pid', 'boa.sqlite', 'boa.sqlite-wal', 'boa.sqlite-shm']) {
    const file = join(dataDir, name);
    const problem = unwritable(file);
    if (problem !== undefined)
      throw new StoreError(
        `${file} is ${problem}: boa writes to it; give the user boa runs as write access to it (chown or chmod u+w), or give another --data`,
        2,
      );
  }
}

/** The highest job id among the data dir's job folders (0 when none). */
function highestJobFolder(jobsDir: string): number {
  if (!existsSync(jobsDir)) return 0;
  if (!statSync(jobsDir).isDirectory())
    throw new StoreError(
      `${jobsDir} is not a directory: boa keeps its jobs' logs there; move it aside and start again`,
    );
  let highest = 0;
  for (const name of readdirSync(jobsDir))
    if (/^\d{1,15}$/.test(name)) highest = Math.max(highest, Number(name));
  return highest;
}

/** Renames the database with its -wal and -shm (a log applied to another file would damage it). */
function moveAside(file: string): string {
  const to = asideName(file, 'broken');
  renameSync(file, to);
  moveLog(file, to);
  return to;
}

/**
 * Puts `copy` in place of `file`, the newer file kept as `<file>.newer-<time>` (returned). The newer
 * file gets its second name (a hard link) before the copy is renamed over it, so a crash at any step
 * leaves a boa.sqlite (the newer file or the copy), never none, which the next start would make afresh.
 */
function rollBackTo(copy: string, file: string): string {
  raiseCopyJobIds(file, copy);
  const to = asideName(file, 'newer');
  linkSync(file, to);
  moveLog(file, to);
  renameSync(copy, file);
  moveLog(copy, file);
  const dir = openSync(dirname(file), 'r');
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
  return to;
}

function asideName(file: string, label: 'broken' | 'newer'): string {
  return `${file}.${label}-${new Date().toISOString().replace(/[:.]/g, '-')}`;
}

function moveLog(from: string, to: string): void {
  for (const suffix of ['-wal', '-shm']) {
    if (existsSync(from + suffix)) renameSync(from + suffix, to + suffix);
  }
}

/** The refusal of a file a newer boa migrated: the newer boa, or this version's copy and how to go back to it. */
function newerRefusal(file: string, problem: string, copy: string | undefined, options: OpenOptions): string {
  if (!copy) {
    const none = options.rollbackToCopy
      ? `; BOA_ROLLBACK_TO_COPY is set but there is no copy this version can run (${copyPath(file, lastTag())})`
      : '';
    return `${file} ${problem}: run that newer boa on it (this version cannot read it; --init would start fresh and keep the file as ${file}.broken-<time>)${none}`;
  }
  // Its age says how much is lost: everything since it was written.
  const copiedAt = statSync(copy).mtime.toISOString();
  return (
    `${file} ${problem}: run that newer boa on it, or go back to this version's copy from before the upgrade, ${copy} (written ${copiedAt}), ` +
    `losing everything since the upgrade (jobs submitted since, the ledger since: see docs/deploy.md, Upgrades and rollbacks): start this version once with BOA_ROLLBACK_TO_COPY=1, ` +
    `which does that (the newer file kept as ${file}.newer-<time>, new job ids above its jobs'), or by hand: docs/deploy.md`
  );
}

/**
 * The copies boa kept before migrations, as a way back when no backup is newer: restored as a backup is
 * (docs/security.md), and migrated again at the start. Empty when there are none.
 */
function copiesToRestore(file: string): string {
  const copies = soundCopies(file, JOURNAL);
  if (copies.length === 0) return '';
  const named = copies.map((c) => `${c.path} (written ${c.written.toISOString()})`).join(', ');
  return ` or from a copy boa kept before a migration, newest first: ${named}, losing everything since the copy was written`;
}

function lastTag(): string {
  return (
    (JSON.parse(readFileSync(JOURNAL, 'utf8')) as { entries: Array<{ tag: string }> }).entries.at(-1)?.tag ??
    'none'
  );
}

function closeAll(db: Db, lock: DataDirLock): void {
  db.$client.close();
  lock.release();
}
