/**
 * A stored database the service must not start on is refused with one line naming the file and what
 * to do; `init` moves it aside (kept) instead. One service per data dir: the lock names the holder.
 */
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/db.ts';
import { StoreError } from '../../src/store/errors.ts';

const dirs: string[] = [];
const stores: Store[] = [];
afterEach(() => {
  for (const store of stores.splice(0)) store.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'boa-store-'));
  dirs.push(dir);
  return dir;
}

function open(dir: string, init = false): Store {
  const store = openStore(dir, { init });
  stores.push(store);
  return store;
}

/** A real boa database with a few plans, closed (checkpointed) so the main file holds everything. */
function seeded(dir: string): string {
  const store = openStore(dir);
  const client = store.db.$client;
  const insert = client.prepare(
    `INSERT INTO plans (computed_at, solver, budget, planning_budget, min_feasible_budget,
       predicted_avg_jct_seconds, predicted_gpu_hours_per_hour, plan, inputs, solve_ms)
     VALUES (?, 'exact', 40, 40, 8, 100, 39, ?, '{}', 1)`,
  );
  for (let i = 0; i < 200; i++) insert.run(i, JSON.stringify({ widths: Array(50).fill(i) }));
  store.close();
  return join(dir, 'boa.sqlite');
}

function refusal(dir: string): string {
  try {
    open(dir);
  } catch (error) {
    expect(error).toBeInstanceOf(StoreError);
    return (error as Error).message;
  }
  throw new Error('opened a database that should have been refused');
}

describe('opening a stored database', () => {
  it('reopens its own database, data intact', () => {
    const dir = dataDir();
    seeded(dir);
    const store = open(dir);
    expect(store.db.$client.prepare('SELECT count(*) FROM plans').pluck().get()).toBe(200);
    expect(store.db.$client.pragma('synchronous', { simple: true })).toBe(2); // FULL
  });

  it('refuses an empty (0 byte) file, naming it and what to do, and leaves it as it was', () => {
    const dir = dataDir();
    const file = join(dir, 'boa.sqlite');
    writeFileSync(file, '');
    const message = refusal(dir);
    expect(message).toContain(`${file} is empty (0 bytes)`);
    expect(message).toMatch(/restore it from the backup.*--init/);
    expect(statSync(file).size).toBe(0);
  });

  it('refuses a file that is not SQLite, and an SQLite database that is not boa', () => {
    const dir = dataDir();
    writeFileSync(join(dir, 'boa.sqlite'), 'PK\u0003\u0004 not a database at all'.repeat(100));
    expect(refusal(dir)).toMatch(/boa\.sqlite is not an SQLite database/);
    const other = dataDir();
    const foreign = new Database(join(other, 'boa.sqlite'));
    foreign.exec(
      "CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO photos VALUES (1, 'x')",
    );
    foreign.close();
    expect(refusal(other)).toMatch(/is not a boa database \(no settings, job_classes, jobs, plans/);
  });

  it('opens a database whose first start was killed while migrating (only the migrations table)', () => {
    // drizzle creates its migrations table on its own, then applies the migrations in one transaction:
    // a first start killed in between leaves this, and nothing of the service's state to lose.
    const dir = dataDir();
    const client = new Database(join(dir, 'boa.sqlite'));
    client.pragma('journal_mode = WAL');
    client.exec(
      'CREATE TABLE IF NOT EXISTS "__drizzle_migrations" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)',
    );
    client.close();
    const store = open(dir);
    const journal = JSON.parse(
      readFileSync(join(import.meta.dirname, '../../src/store/migrations/meta/_journal.json'), 'utf8'),
    ) as { entries: unknown[] };
    const applied = store.db.$client.prepare('SELECT count(*) FROM __drizzle_migrations').pluck().get();
    expect(applied).toBe(journal.entries.length);
    expect(store.db.$client.prepare('SELECT count(*) FROM plans').pluck().get()).toBe(0);
  });

  it('still refuses a database with only a migrations table that records migrations', () => {
    const dir = dataDir();
    const client = new Database(join(dir, 'boa.sqlite'));
    client.exec(
      'CREATE TABLE "__drizzle_migrations" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)',
    );
    client
      .prepare('INSERT INTO __drizzle_migrations (hash, created_at) VALUES (?, ?)')
      .run('a'.repeat(64), 1);
    client.close();
    expect(refusal(dir)).toMatch(/is not a boa database \(no settings, job_classes, jobs, plans table\)/);
  });

  it('refuses a database from a newer boa (a migration this version does not know)', () => {
    const dir = dataDir();
    const file = seeded(dir);
    const client = new Database(file);
    client
      .prepare('INSERT INTO __drizzle_migrations (hash, created_at) VALUES (?, ?)')
      .run('f'.repeat(64), Date.UTC(2099, 0, 1));
    client.close();
    expect(refusal(dir)).toMatch(/was written by a newer boa/);
    // A downgrade: the way out is the newer boa, not a backup.
    expect(refusal(dir)).toMatch(/: run that newer boa on it \(this version cannot read it;/);
    expect(refusal(dir)).not.toMatch(/restore it from the backup/);
  });

  it('refuses a damaged page (quick_check), then --init keeps the file aside and starts fresh', () => {
    const dir = dataDir();
    const file = seeded(dir);
    const client = new Database(file, { readonly: true });
    const pageSize = client.pragma('page_size', { simple: true }) as number;
    const root = client
      .prepare("SELECT rootpage FROM sqlite_master WHERE name = 'plans'")
      .pluck()
      .get() as number;
    client.close();
    const bytes = readFileSync(file);
    // Garble the plans table's root page below its header: cell pointers now point at nonsense.
    bytes.fill(0xa5, (root - 1) * pageSize + 8, root * pageSize);
    writeFileSync(file, bytes);
    expect(refusal(dir)).toMatch(/boa\.sqlite is damaged \(/);

    const fresh = open(dir, true);
    expect(fresh.db.$client.prepare('SELECT count(*) FROM plans').pluck().get()).toBe(0);
    const kept = readdirSync(dir).filter((f) => f.startsWith('boa.sqlite.broken-') && !/-(wal|shm)$/.test(f));
    expect(kept).toHaveLength(1);
    expect(readFileSync(join(dir, kept[0]!)).equals(bytes)).toBe(true);
  });

  it("never reuses a job id whose folder the data dir holds: a database started afresh numbers above the old jobs' logs", () => {
    const dir = dataDir();
    // An old database's jobs left their folders (logs, replica records); the database itself is gone.
    for (const id of ['3', '12', 'not-a-job']) mkdirSync(join(dir, 'jobs', id, '1'), { recursive: true });
    const seq = (store: Store) =>
      store.db.$client.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'jobs'").pluck().get();
    const store = open(dir);
    // AUTOINCREMENT gives the next job seq + 1: 13.
    expect(seq(store)).toBe(12);
    store.close();
    stores.splice(stores.indexOf(store), 1);
    // Reopened with jobs stored past them, the sequence is left alone.
    const again = openStore(dir);
    again.db.$client.prepare("UPDATE sqlite_sequence SET seq = 40 WHERE name = 'jobs'").run();
    again.close();
    expect(seq(open(dir))).toBe(40);
  });

  it('one service per data dir: a second open is refused naming the first pid; free after close', () => {
    const dir = dataDir();
    const first = openStore(dir);
    expect(() => openStore(dir)).toThrow(
      new RegExp(`in use by another boa service \\(pid ${process.pid} on host ${hostname()}\\)`),
    );
    first.close();
    expect(existsSync(join(dir, 'boa.pid'))).toBe(false);
    open(dir);
  });

  it("names the holder's host: a pid from another machine or container is not one to stop here", () => {
    const dir = dataDir();
    open(dir); // closed after the test
    // As a service on another host (shared storage) or in another container wrote it while it holds the lock.
    writeFileSync(join(dir, 'boa.pid'), '1 gpu-node-7\n');
    expect(() => openStore(dir)).toThrow(/in use by another boa service \(pid 1 on host gpu-node-7\)/);
  });

  it('refuses a data dir that is a file (a setting to fix: exit code 2)', () => {
    const dir = dataDir();
    const file = join(dir, 'not-a-dir');
    writeFileSync(file, 'x');
    expect(() => openStore(file)).toThrow(expect.objectContaining({ exitCode: 2 }));
    expect(() => openStore(file)).toThrow(/is a file; the data dir must be a directory/);
  });
});

describe('file modes', () => {
  it('creates the database owner-only in a data dir that already existed open to others', () => {
    const dir = dataDir();
    chmodSync(dir, 0o755);
    const store = open(dir);
    store.db.$client.prepare("INSERT INTO settings (key, value, updated_at) VALUES ('x', '1', 0)").run();
    for (const name of ['boa.sqlite', 'boa.sqlite-wal', 'boa.sqlite-shm']) {
      const file = join(dir, name);
      if (existsSync(file)) expect([name, statSync(file).mode & 0o777]).toEqual([name, 0o600]);
    }
    expect(existsSync(join(dir, 'boa.sqlite-wal'))).toBe(true);
  });
});
