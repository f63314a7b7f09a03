/**
 * A failure-mode review of the store as an operator meets it over upgrades and bad days: a database
 * from every older schema keeps every row; a migration cut short (a full disk, kill -9) leaves the old
 * schema and the next start migrates again; a copy killed before its rename never has the final name; a
 * newer boa's file is refused naming both schemas, unchanged; a kill -9 leaves the WAL's commits; a
 * backup taken as docs/security.md says restores; a full or read-only volume, and a file or directory
 * where the other is expected, are refused in one line naming the path and why. The kill -9 points are
 * store-child.ts, stopped dead at one statement or rename; full and read-only volumes are a real 1 MiB
 * tmpfs where this process may mount one (root), else those tests are skipped.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { getTableName, is } from 'drizzle-orm';
import { SQLiteTable } from 'drizzle-orm/sqlite-core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { keepCopyBeforeMigrating } from '../../src/store/copies.ts';
import { openStore } from '../../src/store/db.ts';
import { StoreError } from '../../src/store/errors.ts';
import * as schema from '../../src/store/schema.ts';
import { migrateAsNewer, MIGRATIONS, olderDatabase, seedPlans, TAGS } from './schema-versions.ts';
import { refusal } from './refusal.ts';

/**
 * A disk filling up, for boa.sqlite: `roomInPages`, the pages SQLite may add on a connection opened while
 * set; `fullAtCommit`, a commit the disk cannot take, which SQLite answers by rolling the whole
 * transaction back before it reports SQLITE_FULL (seen on a full tmpfs: the ROLLBACK that followed then
 * failed, "no transaction is active").
 */
const disk = vi.hoisted(() => ({ roomInPages: undefined as number | undefined, fullAtCommit: false }));
vi.mock('better-sqlite3', async (importOriginal) => {
  const Real = (await importOriginal<{ default: typeof import('better-sqlite3') }>()).default;
  class OnAFillingDisk extends Real {
    constructor(...args: ConstructorParameters<typeof Real>) {
      super(...args);
      if (disk.roomInPages !== undefined && this.name.endsWith('boa.sqlite')) {
        const pages = this.pragma('page_count', { simple: true }) as number;
        this.pragma(`max_page_count = ${pages + disk.roomInPages}`);
      }
    }
    override exec(source: string): this {
      if (this.commitFails(source)) this.failCommit();
      return super.exec(source);
    }
    override prepare: InstanceType<typeof Real>['prepare'] = (source) => {
      if (!this.commitFails(source)) return super.prepare(source);
      return { run: () => this.failCommit() } as never;
    };
    private commitFails(source: string): boolean {
      return disk.fullAtCommit && this.name.endsWith('boa.sqlite') && /^\s*COMMIT\b/i.test(source);
    }
    private failCommit(): never {
      super.exec('ROLLBACK');
      throw new Real.SqliteError('database or disk is full', 'SQLITE_FULL');
    }
  }
  return { default: OnAFillingDisk };
});

const CHILD = join(import.meta.dirname, 'store-child.ts');
const JOURNAL = join(MIGRATIONS, 'meta', '_journal.json');

const cleanups: Array<() => void> = [];
afterEach(() => {
  disk.roomInPages = undefined;
  disk.fullAtCommit = false;
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'boa-store-review-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Two rows in every table the schema has so far, each column given a value of its declared type. */
function seedEveryTable(db: Database.Database): void {
  for (const table of userTables(db)) {
    const all = db.prepare('SELECT name, type, pk FROM pragma_table_info(?)').all(table) as Array<{
      name: string;
      type: string;
      pk: number;
    }>;
    // Only a lone INTEGER PRIMARY KEY is the rowid SQLite fills; a composite key's columns are given.
    const rowid = all.filter((c) => c.pk > 0).length === 1;
    const columns = all.filter((c) => !(rowid && c.pk === 1 && c.type.toUpperCase() === 'INTEGER'));
    const insert = db.prepare(
      `INSERT INTO "${table}" (${columns.map((c) => `"${c.name}"`).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
    );
    for (let i = 0; i < 2; i++) {
      insert.run(
        columns.map((c) => {
          const type = c.type.toUpperCase();
          if (type === 'INTEGER') return 1000 + i;
          if (type === 'REAL') return 1.5 + i;
          // JSON, since some text columns are JSON to this version; unique, since some are keys.
          return JSON.stringify([`${table}.${c.name}.${i}`]);
        }),
      );
    }
  }
}

function userTables(db: Database.Database): string[] {
  return db
    .prepare(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> '__drizzle_migrations' ORDER BY name",
    )
    .pluck()
    .all() as string[];
}

/** Every row of every table, its columns as `columnsOf` has them (the old schema's). */
function rowsOf(db: Database.Database, columnsOf: Map<string, string[]>): Record<string, unknown[]> {
  const rows: Record<string, unknown[]> = {};
  for (const [table, columns] of columnsOf)
    rows[table] = db
      .prepare(`SELECT ${columns.map((c) => `"${c}"`).join(', ')} FROM "${table}" ORDER BY rowid`)
      .all();
  return rows;
}

function columnsOf(db: Database.Database): Map<string, string[]> {
  return new Map(
    userTables(db).map((t) => [
      t,
      db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all(t) as string[],
    ]),
  );
}

/** Reads `file` with a plain connection (recovering a WAL a kill left), closed after. */
function inspect<T>(file: string, read: (db: Database.Database) => T): T {
  const db = new Database(file);
  try {
    return read(db);
  } finally {
    db.close();
  }
}

const migrationsIn = (db: Database.Database) =>
  db.prepare('SELECT count(*) FROM __drizzle_migrations').pluck().get() as number;

/** A data dir whose database a boa from before `tag` wrote, two rows in every table. */
function olderDataDir(tag: string) {
  const dir = tempDir();
  const file = join(dir, 'boa.sqlite');
  const db = olderDatabase(file, tag, tempDir());
  seedEveryTable(db);
  const before = { columns: columnsOf(db), migrations: migrationsIn(db) };
  const rows = rowsOf(db, before.columns);
  db.close();
  return { dir, file, ...before, rows };
}

/** This version opens the older data dir: migrated to the newest schema, every row kept. */
function opensMigratedKeepingRows(older: ReturnType<typeof olderDataDir>): void {
  const store = openStore(older.dir);
  try {
    expect(migrationsIn(store.db.$client)).toBe(TAGS.length);
    expect(rowsOf(store.db.$client, older.columns)).toEqual(older.rows);
  } finally {
    store.close();
  }
}

/** store-child.ts on `dataDir`, resolved with it once it says `stopped`, there to be killed. */
function stoppedChild(dataDir: string, point: string, arg: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dataDir, point, arg]);
  cleanups.push(() => child.kill('SIGKILL'));
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((stopped, fail) => {
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      if (line === 'stopped') stopped(child);
      else fail(new Error(`store-child.ts said ${line} before stopping (${stderr})`));
    });
    child.on('exit', (code) =>
      fail(new Error(`store-child.ts exited with ${code} before stopping: ${stderr}`)),
    );
  });
}

function killHard(child: ChildProcess): Promise<void> {
  return new Promise((gone) => {
    child.removeAllListeners('exit');
    child.on('exit', () => gone());
    child.kill('SIGKILL');
  });
}

/** Mounts a 1 MiB tmpfs on `dir`: a volume that fills for real. False where this process may not (not root). */
function mountSmallVolume(dir: string): boolean {
  if (process.getuid?.() !== 0) return false;
  return spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir]).status === 0;
}

/** A 1 MiB tmpfs in a temp dir, unmounted after the test (before the dir is removed). */
function smallVolume(): string {
  const volume = tempDir();
  expect(mountSmallVolume(volume)).toBe(true);
  cleanups.push(() => spawnSync('umount', [volume]));
  return volume;
}

const CAN_MOUNT = (() => {
  const dir = mkdtempSync(join(tmpdir(), 'boa-store-mount-'));
  const mounted = mountSmallVolume(dir);
  if (mounted) spawnSync('umount', [dir]);
  rmSync(dir, { recursive: true, force: true });
  return mounted;
})();

/** Fills `volume` with 4 KiB files until it is full, then frees `pages` of them; returns the rest. */
function fillLeaving(volume: string, pages: number): string[] {
  const fillers: string[] = [];
  try {
    for (;;) {
      const filler = join(volume, `filler-${fillers.length}`);
      writeFileSync(filler, Buffer.alloc(4096));
      fillers.push(filler);
    }
  } catch {
    // Full.
  }
  for (const filler of fillers.splice(-pages)) rmSync(filler, { force: true });
  return fillers;
}

describe('a database from every older schema', () => {
  it.each(TAGS.slice(1))('from before %s: every row kept and readable by this version', (tag) => {
    const older = olderDataDir(tag);
    const store = openStore(older.dir);
    try {
      const db = store.db.$client;
      expect(migrationsIn(db)).toBe(TAGS.length);
      expect(rowsOf(db, older.columns)).toEqual(older.rows);
      // Readable through this version's schema too (its JSON and boolean columns among them).
      for (const table of Object.values(schema).filter((t) => is(t, SQLiteTable))) {
        const expected = older.rows[getTableName(table)]?.length ?? 0;
        expect([getTableName(table), store.db.select().from(table).all().length]).toEqual([
          getTableName(table),
          expected,
        ]);
      }
    } finally {
      store.close();
    }
  });
});

describe('a migration cut short', () => {
  it('a full disk mid-migration: one line saying so, nothing migrated; the next start migrates, every row kept', () => {
    // Before 0005: its two ALTERs run, then its index needs a page the disk has not got.
    const older = olderDataDir('0005_job_idempotency_key');
    disk.roomInPages = 0;
    const error = refusal(older.dir);
    expect(error.message).toMatch(
      new RegExp(
        `^${older.file} cannot be migrated \\(SQLITE_FULL: database or disk is full\\): nothing was migrated, the file is as it was; free space in ${older.dir} and start again$`,
      ),
    );
    inspect(older.file, (db) => {
      expect(migrationsIn(db)).toBe(older.migrations);
      expect(columnsOf(db)).toEqual(older.columns);
      expect(rowsOf(db, older.columns)).toEqual(older.rows);
    });

    disk.roomInPages = undefined;
    opensMigratedKeepingRows(older);
  });

  it('a full disk at the commit, which SQLite rolls back itself: the line still names the full disk', () => {
    const older = olderDataDir(TAGS.at(-1)!);
    disk.fullAtCommit = true;
    expect(refusal(older.dir).message).toBe(
      `${older.file} cannot be migrated (SQLITE_FULL: database or disk is full): nothing was migrated, the file is as it was; free space in ${older.dir} and start again`,
    );
    inspect(older.file, (db) => expect(migrationsIn(db)).toBe(older.migrations));
    disk.fullAtCommit = false;
    openStore(older.dir).close();
    inspect(older.file, (db) => {
      expect(migrationsIn(db)).toBe(TAGS.length);
      expect(rowsOf(db, older.columns)).toEqual(older.rows);
    });
  });

  it('kill -9 mid-migration leaves the old schema and every row; the next start migrates again', async () => {
    const older = olderDataDir('0010_last_report_at');
    // Stopped at the last migration's statement: 0010 to 0013 have run in the transaction.
    const child = await stoppedChild(older.dir, 'sql', 'ADD `gpus_by_class`');
    await killHard(child);
    inspect(older.file, (db) => {
      expect(migrationsIn(db)).toBe(older.migrations);
      expect(columnsOf(db)).toEqual(older.columns);
      expect(rowsOf(db, older.columns)).toEqual(older.rows);
    });

    opensMigratedKeepingRows(older);
  }, 120_000);

  it('kill -9 with the copy written but not yet renamed: no copy under its final name; the next start makes it', async () => {
    const older = olderDataDir(TAGS.at(-1)!);
    const copy = `${older.file}.at-${TAGS.at(-2)}`;
    const child = await stoppedChild(older.dir, 'rename', '.at-');
    await killHard(child);
    expect(existsSync(copy)).toBe(false);
    expect(existsSync(`${copy}.partial`)).toBe(true);
    inspect(older.file, (db) => expect(migrationsIn(db)).toBe(older.migrations));

    openStore(older.dir).close();
    expect(readdirSync(older.dir).filter((f) => f.startsWith('boa.sqlite.at-'))).toEqual([
      `boa.sqlite.at-${TAGS.at(-2)}`,
    ]);
    inspect(copy, (db) => {
      expect(migrationsIn(db)).toBe(older.migrations);
      expect(rowsOf(db, older.columns)).toEqual(older.rows);
    });
  }, 120_000);
});

describe('a database from a newer boa', () => {
  it('is refused naming both schema versions, and nothing on disk changes', () => {
    const dir = tempDir();
    const file = join(dir, 'boa.sqlite');
    openStore(dir).close();
    migrateAsNewer(file);
    const bytes = readFileSync(file);
    const files = readdirSync(dir).sort();
    expect(refusal(dir).message).toContain(
      `${file} was written by a newer boa (its schema has ${TAGS.length + 1} migrations, the newest from 2099-01-01T00:00:00.000Z; this version knows ${TAGS.length}, up to ${TAGS.at(-1)}): run that newer boa on it`,
    );
    expect(readFileSync(file).equals(bytes)).toBe(true);
    expect(readdirSync(dir).sort()).toEqual(files);
  });
});

describe('a backup and its restore (docs/security.md)', () => {
  it("SQLite's online backup of a running boa has every commit, and restores; a file copy lacks those in the WAL", async () => {
    const dir = tempDir();
    const file = join(dir, 'boa.sqlite');
    const store = openStore(dir);
    seedPlans(store.db.$client, 5);
    const backups = tempDir();
    const backup = join(backups, 'boa.sqlite');
    const copied = join(backups, 'copied.sqlite');
    // While boa runs: its commits are in the WAL, which a copy of the file alone does not have.
    copyFileSync(file, copied);
    const live = new Database(file);
    await live.backup(backup);
    live.close();
    store.close();
    inspect(copied, (db) => expect(userTables(db)).toEqual([]));

    // Restored as the doc says: the old file with its -wal and -shm moved aside, the backup in its place.
    for (const suffix of ['', '-wal', '-shm'])
      if (existsSync(file + suffix)) renameSync(file + suffix, `${file}.old${suffix}`);
    copyFileSync(backup, file);
    const restored = openStore(dir);
    try {
      expect(restored.db.$client.prepare('SELECT count(*) FROM plans').pluck().get()).toBe(5);
    } finally {
      restored.close();
    }
  });
});

describe('a bad day', () => {
  it('kill -9 with commits only in the WAL: the next start has them', async () => {
    const dir = tempDir();
    const child = await stoppedChild(dir, 'written', '5');
    await killHard(child);
    const wal = join(dir, 'boa.sqlite-wal');
    expect(statSync(wal).size).toBeGreaterThan(0);
    const store = openStore(dir);
    try {
      expect(store.db.$client.prepare('SELECT count(*) FROM plans').pluck().get()).toBe(5);
    } finally {
      store.close();
    }
  }, 120_000);

  it.skipIf(!CAN_MOUNT)(
    'a first start on a full volume, at every amount of room left: a one-line refusal, and the next start with room opens',
    () => {
      const volume = smallVolume();
      const failures: string[] = [];
      for (let room = 1; room <= 24; room++) {
        const dir = join(volume, 'data');
        mkdirSync(dir);
        const fillers = fillLeaving(volume, room);
        let first = 'opened';
        try {
          openStore(dir).close();
        } catch (error) {
          first = error instanceof StoreError ? 'refused' : `threw ${(error as Error).message}`;
        }
        for (const filler of fillers) rmSync(filler);
        try {
          openStore(dir).close();
          if (first !== 'opened' && first !== 'refused') failures.push(`room ${room}: ${first}`);
        } catch (error) {
          failures.push(`room ${room}: ${first}, then ${(error as Error).message}`);
        }
        rmSync(dir, { recursive: true });
      }
      expect(failures).toEqual([]);
    },
    120_000,
  );

  it.skipIf(!CAN_MOUNT)(
    'a volume that fills during the copy before migrating (its free space misread): refused, no copy left, nothing migrated',
    () => {
      const volume = smallVolume();
      const older = olderDataDir(TAGS.at(-1)!);
      const dir = join(volume, 'data');
      mkdirSync(dir);
      const file = join(dir, 'boa.sqlite');
      inspect(older.file, (db) => db.prepare('VACUUM INTO ?').run(file));
      fillLeaving(volume, 2);
      let message = '';
      try {
        keepCopyBeforeMigrating(file, JOURNAL, () => Number.POSITIVE_INFINITY);
      } catch (error) {
        expect(error).toBeInstanceOf(StoreError);
        message = (error as Error).message;
      }
      expect(message).toMatch(
        /: nothing was migrated; free space in .* \(the copy needs about the database's size\) and start again$/,
      );
      expect(readdirSync(dir)).toEqual(['boa.sqlite']);
      inspect(file, (db) => {
        expect(migrationsIn(db)).toBe(older.migrations);
        expect(rowsOf(db, older.columns)).toEqual(older.rows);
      });
    },
    120_000,
  );

  it.skipIf(!CAN_MOUNT)(
    'a read-only volume: a data dir on it, or one to be made there, is refused naming the read-only folder (exit 2)',
    () => {
      const volume = smallVolume();
      openStore(join(volume, 'data')).close();
      expect(spawnSync('mount', ['-o', 'remount,ro', volume]).status).toBe(0);
      const onIt = refusal(join(volume, 'data'));
      expect([onIt.exitCode, onIt.message]).toEqual([
        2,
        expect.stringMatching(`^data dir ${join(volume, 'data')} is not writable: a read-only file system: `),
      ]);
      const toMake = refusal(join(volume, 'new', 'data'));
      // Node's mkdir said ENOENT here, and the line did too.
      expect([toMake.exitCode, toMake.message]).toEqual([
        2,
        `cannot create data dir ${join(volume, 'new', 'data')}: ${volume} is not writable: a read-only file system`,
      ]);
    },
    120_000,
  );

  it('a file where a directory is expected: a data dir under a file, a jobs folder that is a file', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'file'), 'x');
    expect(refusal(join(dir, 'file', 'data')).message).toBe(
      `cannot create data dir ${join(dir, 'file', 'data')}: not reachable: a part of its path is a file, not a directory`,
    );
    writeFileSync(join(dir, 'jobs'), 'x');
    expect(refusal(dir).message).toBe(
      `${join(dir, 'jobs')} is not a directory: boa keeps its jobs' logs there; move it aside and start again`,
    );
  });

  it('a pid file that cannot be written refuses the start naming it, and lets go of the lock', () => {
    const dir = tempDir();
    // What a full disk does to the write, made certain: the pid file's name is taken by a directory.
    mkdirSync(join(dir, 'boa.pid'));
    expect(refusal(dir).message).toBe(
      `cannot lock data dir ${dir}: ${join(dir, 'boa.pid')} is a directory, not a file`,
    );
    rmSync(join(dir, 'boa.pid'), { recursive: true });
    openStore(dir).close();
  });

  it("a directory in the database file's place (a bind mount of a missing host file) is refused naming it", () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'boa.sqlite'));
    expect(refusal(dir).message).toMatch(
      new RegExp(`^${join(dir, 'boa.sqlite')} is a directory, not a file: `),
    );
    expect(statSync(join(dir, 'boa.sqlite')).isDirectory()).toBe(true);
  });
});
