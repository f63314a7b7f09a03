/**
 * Before migrating a stored database, boa keeps a copy of it as it was (`boa.sqlite.at-<its last
 * migration>`), the newest three, so a version rolled back after an upgrade has a file it can run; a
 * copy that cannot be written stops the start before anything is migrated. An older boa refused a
 * file a newer one migrated names that copy, and BOA_ROLLBACK_TO_COPY=1 starts from it.
 */
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { COPIES_KEPT, freeBytesIn, keepCopyBeforeMigrating, type KeptCopy } from '../../src/store/copies.ts';
import { openStore, type OpenOptions } from '../../src/store/db.ts';
import { StoreError } from '../../src/store/errors.ts';
import { MIGRATIONS, migrateAsNewer, olderDatabase, seedPlans, TAGS } from './schema-versions.ts';

const LAST = TAGS.at(-1)!;
const JOURNAL = join(MIGRATIONS, 'meta', '_journal.json');
const BEFORE_LAST = TAGS.at(-2)!;

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'boa-copies-'));
  dirs.push(dir);
  return dir;
}

/** A data dir whose database an older boa wrote (migrations before LAST), with two plans. */
function olderDataDir(): string {
  const dir = tempDir();
  const db = olderDatabase(join(dir, 'boa.sqlite'), LAST, tempDir());
  seedPlans(db, 2);
  db.close();
  return dir;
}

/** A data dir whose database this version wrote, with three plans, and a copy of it for this version. */
function currentWithCopy(): { dir: string; copy: string } {
  const dir = tempDir();
  const store = openStore(dir);
  seedPlans(store.db.$client, 3);
  store.close();
  const copy = join(dir, `boa.sqlite.at-${LAST}`);
  copyFileSync(join(dir, 'boa.sqlite'), copy);
  return { dir, copy };
}

function count(file: string, sql: string): unknown {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare(sql).pluck().get();
  } finally {
    db.close();
  }
}

function open(dir: string, options: OpenOptions = {}) {
  openStore(dir, options).close();
}

function refusal(dir: string, options: OpenOptions = {}): string {
  try {
    open(dir, options);
  } catch (error) {
    expect(error).toBeInstanceOf(StoreError);
    return (error as Error).message;
  }
  throw new Error('opened a database that should have been refused');
}

const copiesIn = (dir: string) =>
  readdirSync(dir)
    .filter((f) => f.startsWith('boa.sqlite.at-'))
    .sort();

describe('a copy before migrating', () => {
  it('pending migrations: the database as it was is kept, old schema and data, owner-only', () => {
    const dir = olderDataDir();
    const copied: KeptCopy[] = [];
    open(dir, { onCopied: (copy) => copied.push(copy) });
    const copy = join(dir, `boa.sqlite.at-${BEFORE_LAST}`);
    expect(copied).toEqual([{ path: copy, tag: BEFORE_LAST, pending: [LAST] }]);
    expect(copiesIn(dir)).toEqual([`boa.sqlite.at-${BEFORE_LAST}`]);
    expect(count(copy, 'SELECT count(*) FROM __drizzle_migrations')).toBe(TAGS.length - 1);
    expect(count(copy, 'SELECT count(*) FROM plans')).toBe(2);
    expect(statSync(copy).mode & 0o777).toBe(0o600);
    // The database itself was migrated, its plans kept.
    const file = join(dir, 'boa.sqlite');
    expect(count(file, 'SELECT count(*) FROM __drizzle_migrations')).toBe(TAGS.length);
    expect(count(file, 'SELECT count(*) FROM plans')).toBe(2);
  });

  it('nothing pending, or a new database: no copy', () => {
    const dir = tempDir();
    const copied: KeptCopy[] = [];
    open(dir, { onCopied: (copy) => copied.push(copy) });
    open(dir, { onCopied: (copy) => copied.push(copy) });
    expect(copied).toEqual([]);
    expect(copiesIn(dir)).toEqual([]);
  });

  it('keeps the newest three copies, and replaces a partial copy a crash left', () => {
    const dir = olderDataDir();
    const old = ['0001_a', '0002_b', '0003_c'].map((tag, i) => {
      const path = join(dir, `boa.sqlite.at-${tag}`);
      writeFileSync(path, 'an older copy');
      utimesSync(path, 1000 + i, 1000 + i);
      return path;
    });
    writeFileSync(`${old[0]}-wal`, 'its log');
    const partial = join(dir, `boa.sqlite.at-${BEFORE_LAST}.partial`);
    writeFileSync(partial, 'cut short by a crash');
    open(dir);
    expect(copiesIn(dir)).toEqual([
      'boa.sqlite.at-0002_b',
      'boa.sqlite.at-0003_c',
      `boa.sqlite.at-${BEFORE_LAST}`,
    ]);
    expect(existsSync(partial)).toBe(false);
    expect(count(join(dir, `boa.sqlite.at-${BEFORE_LAST}`), 'SELECT count(*) FROM plans')).toBe(2);
  });

  it('older copies are pruned before the new one is written: the volume never holds one more than kept', () => {
    const dir = olderDataDir();
    ['0001_a', '0002_b', '0003_c'].forEach((tag, i) => {
      const path = join(dir, `boa.sqlite.at-${tag}`);
      writeFileSync(path, 'an older copy');
      utimesSync(path, 1000 + i, 1000 + i);
    });
    let whileCopying: string[] = [];
    keepCopyBeforeMigrating(join(dir, 'boa.sqlite'), JOURNAL, () => {
      whileCopying = copiesIn(dir);
      return Number.MAX_SAFE_INTEGER;
    });
    expect(whileCopying).toEqual(['boa.sqlite.at-0002_b', 'boa.sqlite.at-0003_c']);
    expect(copiesIn(dir)).toHaveLength(COPIES_KEPT);
  });

  it('no room for the copy: refused before writing it, naming the bytes needed and free', () => {
    const dir = olderDataDir();
    const file = join(dir, 'boa.sqlite');
    const size = statSync(file).size + (existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0);
    let message = '';
    try {
      keepCopyBeforeMigrating(file, JOURNAL, () => 1000);
    } catch (error) {
      expect(error).toBeInstanceOf(StoreError);
      message = (error as Error).message;
    }
    expect(message).toContain(`cannot keep a copy of ${file} before migrating it: it needs about `);
    expect(message).toContain(`bytes (the database's ${size} and a margin) and ${dir} has 1000 free`);
    expect(message).toContain('nothing was migrated; free space there');
    expect(readdirSync(dir).filter((f) => f.startsWith('boa.sqlite.'))).toEqual([]);
    expect(count(file, 'SELECT count(*) FROM __drizzle_migrations')).toBe(TAGS.length - 1);
  });

  it('free space: read from the file system, unbounded where it cannot be read (the copy then decides)', () => {
    const free = freeBytesIn(tmpdir());
    expect(Number.isFinite(free) && free > 0).toBe(true);
    expect(freeBytesIn(join(tmpdir(), 'boa-no-such-dir', 'x'))).toBe(Number.POSITIVE_INFINITY);
  });

  it('a copy that cannot be written stops the start before migrating, the database as it was', () => {
    const dir = olderDataDir();
    // What a full disk does to the copy, made certain: its temporary name is taken by a directory.
    const partial = join(dir, `boa.sqlite.at-${BEFORE_LAST}.partial`);
    mkdirSync(partial);
    const message = refusal(dir);
    expect(message).toMatch(/cannot keep a copy of .*boa\.sqlite before migrating it \(/);
    expect(message).toMatch(/EISDIR.*\): nothing was migrated; fix that and start again$/);
    const file = join(dir, 'boa.sqlite');
    expect(count(file, 'SELECT count(*) FROM __drizzle_migrations')).toBe(TAGS.length - 1);
    expect(copiesIn(dir)).toEqual([`boa.sqlite.at-${BEFORE_LAST}.partial`]);
    // The lock was let go: once there is room, the start goes ahead.
    rmSync(partial, { recursive: true });
    open(dir);
    expect(count(file, 'SELECT count(*) FROM __drizzle_migrations')).toBe(TAGS.length);
  });
});

describe('a database a newer boa migrated', () => {
  it("the refusal names this version's copy and how to go back to it", () => {
    const { dir, copy } = currentWithCopy();
    migrateAsNewer(join(dir, 'boa.sqlite'));
    const file = join(dir, 'boa.sqlite');
    const message = refusal(dir);
    expect(message).toContain(`${file} was written by a newer boa`);
    expect(message).toContain(
      `run that newer boa on it, or go back to this version's copy from before the upgrade, ${copy} (written ${statSync(copy).mtime.toISOString()})`,
    );
    expect(message).toContain(
      'losing everything since the upgrade (jobs submitted since, the ledger since: see docs/deploy.md, Upgrades and rollbacks)',
    );
    expect(message).toContain('start this version once with BOA_ROLLBACK_TO_COPY=1');
    expect(message).toContain('or by hand: docs/deploy.md');
    expect(message.split('\n')).toHaveLength(1);
  });

  it('BOA_ROLLBACK_TO_COPY: the newer file is moved aside, kept, and this version starts from the copy', () => {
    const { dir, copy } = currentWithCopy();
    migrateAsNewer(join(dir, 'boa.sqlite'));
    const rolled: string[][] = [];
    const written = new Date('2026-11-30T08:00:00.000Z');
    utimesSync(copy, written, written);
    const store = openStore(dir, {
      rollbackToCopy: true,
      onRolledBack: (newerAt, from, copiedAt) => rolled.push([newerAt, from, copiedAt.toISOString()]),
    });
    try {
      expect(store.db.$client.prepare('SELECT count(*) FROM plans').pluck().get()).toBe(3);
    } finally {
      store.close();
    }
    const newer = readdirSync(dir).filter((f) => /^boa\.sqlite\.newer-[\dTZ-]+$/.test(f));
    expect(newer).toHaveLength(1);
    // The copy's time, not the rollback's: raising its job ids kept it.
    expect(rolled).toEqual([[join(dir, newer[0]!), copy, written.toISOString()]]);
    expect(statSync(join(dir, 'boa.sqlite')).mtime).toEqual(written);
    expect(existsSync(copy)).toBe(false);
    // The newer file is whole: its plan since the copy, its migration.
    expect(count(join(dir, newer[0]!), 'SELECT count(*) FROM plans')).toBe(4);
    expect(count(join(dir, newer[0]!), 'SELECT count(*) FROM __drizzle_migrations')).toBe(TAGS.length + 1);
  });

  it('BOA_ROLLBACK_TO_COPY: the copy numbers new jobs above every job the newer file gave an id (their pods may be about)', () => {
    const { dir } = currentWithCopy();
    const file = join(dir, 'boa.sqlite');
    migrateAsNewer(file);
    // Jobs 2 and 3 submitted since the upgrade: in the newer file only.
    const newer = new Database(file);
    newer.prepare("INSERT OR REPLACE INTO sqlite_sequence (name, seq) VALUES ('jobs', 3)").run();
    newer.close();
    const store = openStore(dir, { rollbackToCopy: true });
    try {
      const seq = store.db.$client
        .prepare("SELECT seq FROM sqlite_sequence WHERE name = 'jobs'")
        .pluck()
        .get();
      expect(seq).toBe(3);
    } finally {
      store.close();
    }
  });

  it('BOA_ROLLBACK_TO_COPY without a copy for this version: refused, the file left where it is', () => {
    const { dir, copy } = currentWithCopy();
    rmSync(copy);
    migrateAsNewer(join(dir, 'boa.sqlite'));
    expect(refusal(dir, { rollbackToCopy: true })).toMatch(
      /run that newer boa on it .*BOA_ROLLBACK_TO_COPY is set but there is no copy this version can run/,
    );
    expect(readdirSync(dir).filter((f) => f.startsWith('boa.sqlite.'))).toEqual([]);
    expect(count(join(dir, 'boa.sqlite'), 'SELECT count(*) FROM plans')).toBe(4);
  });
});
