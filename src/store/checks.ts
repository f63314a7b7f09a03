import { closeSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { isLocked, lockedRefusal } from './busy.ts';

const SQLITE_HEADER = 'SQLite format 3\0';
/** Tables every boa database has had since its first migration. */
const BOA_TABLES = ['settings', 'job_classes', 'jobs', 'plans'];

/**
 * Why an existing database file must not be opened, or undefined when it looks sound: empty, not
 * SQLite, not boa's, written by a newer boa (a migration this version does not know), or damaged
 * (`PRAGMA quick_check`, which reads every page: a few ms per MB). Nothing is written, but it is
 * opened read-write so that a WAL left by a kill -9 is recovered as a normal open would. A file another
 * process keeps locked is not a problem of the file: that throws lockedRefusal's StoreError.
 */
export function databaseProblem(file: string, journalFile: string): string | undefined {
  const stat = statSync(file);
  // A bind mount of a host file that did not exist makes a directory; reading it threw a bare EISDIR.
  if (!stat.isFile()) return stat.isDirectory() ? 'is a directory, not a file' : 'is not a regular file';
  const size = stat.size;
  if (size === 0) return 'is empty (0 bytes)';
  const header = Buffer.alloc(SQLITE_HEADER.length);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, header, 0, header.length, 0);
  } finally {
    closeSync(fd);
  }
  if (header.toString('latin1') !== SQLITE_HEADER) return 'is not an SQLite database';
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { fileMustExist: true });
    // Waits out (5 s) and then refuses another process's write transaction or exclusive lock, before
    // anything is copied or migrated: boa could write nothing while it lasts. Takes the lock, writes nothing.
    db.exec('BEGIN IMMEDIATE');
    db.exec('ROLLBACK');
    const tables = new Set(
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[],
    );
    // No tables at all: a first start that died before its first migration committed; nothing to lose.
    if (tables.size === 0) return undefined;
    // Only drizzle's migrations table, recording nothing: drizzle creates it on its own before the
    // migrations' transaction, so a first start killed while migrating leaves this. Nothing to lose either.
    if (
      tables.size === 1 &&
      tables.has('__drizzle_migrations') &&
      db.prepare('SELECT count(*) FROM __drizzle_migrations').pluck().get() === 0
    ) {
      return undefined;
    }
    const absent = [...BOA_TABLES, '__drizzle_migrations'].filter((t) => !tables.has(t));
    if (absent.length > 0) return `is not a boa database (no ${absent.join(', ')} table)`;
    const applied = db
      .prepare('SELECT count(*) AS count, max(created_at) AS newest FROM __drizzle_migrations')
      .get() as {
      count: number;
      newest: number | null;
    };
    const known = knownMigrations(journalFile);
    if (applied.newest !== null && Number(applied.newest) > known.newest) {
      // Both schema versions, as far as the file says: it records its migrations' count and time, not their names.
      return `was written by a newer boa (its schema has ${applied.count} migrations, the newest from ${new Date(Number(applied.newest)).toISOString()}; this version knows ${known.count}, up to ${known.lastTag})`;
    }
    const check = db.pragma('quick_check', { simple: false }) as Array<{ quick_check: string }>;
    const problems = check.map((row) => row.quick_check).filter((line) => line !== 'ok');
    if (problems.length > 0) return `is damaged (quick_check: ${problems.slice(0, 2).join('; ')})`;
    return undefined;
  } catch (error) {
    if (isLocked(error)) throw lockedRefusal(file);
    const code = (error as { code?: string }).code ?? '';
    if (code.startsWith('SQLITE_CORRUPT')) return `is damaged (${(error as Error).message})`;
    if (code === 'SQLITE_NOTADB') return 'is not an SQLite database';
    return `cannot be read (${(error as Error).message})`;
  } finally {
    db?.close();
  }
}

function knownMigrations(journalFile: string): { newest: number; lastTag: string; count: number } {
  const journal = JSON.parse(readFileSync(journalFile, 'utf8')) as {
    entries: Array<{ when: number; tag: string }>;
  };
  const last = journal.entries.at(-1);
  return { newest: last?.when ?? 0, lastTag: last?.tag ?? 'none', count: journal.entries.length };
}
