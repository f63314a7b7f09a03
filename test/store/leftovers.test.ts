/**
 * Problems earlier failure-mode reviews of the store found and left: a damaged database's refusal names
 * the copies boa kept before migrations as a way back; a database another process keeps locked (an
 * operator's sqlite3 shell in a write transaction or exclusive locking mode) is refused as locked, not
 * as damaged, and nothing is touched, --init included. The other process is a real second connection.
 */
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/db.ts';
import { StoreError } from '../../src/store/errors.ts';
import { refusal } from './refusal.ts';
import { olderDatabase, seedPlans, TAGS } from './schema-versions.ts';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'boa-store-leftovers-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A data dir whose database a boa from before `tag` wrote, with `plans` plans; closed. */
function olderDataDir(tag: string, plans = 0): string {
  const dir = tempDir();
  const db = olderDatabase(join(dir, 'boa.sqlite'), tag, tempDir());
  seedPlans(db, plans);
  db.close();
  return dir;
}

/** Garbles the plans table's root page below its header, as open.test.ts does: quick_check then fails. */
function damage(file: string): void {
  const db = new Database(file);
  db.pragma('wal_checkpoint(TRUNCATE)');
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  const root = db.prepare("SELECT rootpage FROM sqlite_master WHERE name = 'plans'").pluck().get() as number;
  db.close();
  const bytes = readFileSync(file);
  bytes.fill(0xa5, (root - 1) * pageSize + 8, root * pageSize);
  writeFileSync(file, bytes);
}

/** A second connection to `file`, closed after the test: the operator's sqlite3 shell. */
function otherConnection(file: string): Database.Database {
  const other = new Database(file);
  cleanups.push(() => other.close());
  return other;
}

/** The database's files and copies in `dir`, each with its bytes' hash: what "nothing was touched" compares. */
function snapshot(dir: string): Record<string, string> {
  return Object.fromEntries(
    readdirSync(dir)
      .filter((name) => name.startsWith('boa.sqlite'))
      .sort()
      .map((name) => [
        name,
        createHash('sha256')
          .update(readFileSync(join(dir, name)))
          .digest('hex'),
      ]),
  );
}

describe("a damaged database's refusal", () => {
  it('names the copies kept before migrations, newest first with their times, and one of them restores', () => {
    // Two upgrades' copies: this data dir's own, and another's moved in as an earlier upgrade's.
    const dir = olderDataDir(TAGS.at(-1)!, 200);
    openStore(dir).close();
    const newer = join(dir, `boa.sqlite.at-${TAGS.at(-2)}`);
    const elsewhere = olderDataDir(TAGS.at(-3)!);
    openStore(elsewhere).close();
    const older = join(dir, `boa.sqlite.at-${TAGS.at(-4)}`);
    renameSync(join(elsewhere, `boa.sqlite.at-${TAGS.at(-4)}`), older);
    const olderAt = new Date('2026-11-01T10:00:00.000Z');
    const newerAt = new Date('2026-11-20T10:00:00.000Z');
    utimesSync(older, olderAt, olderAt);
    utimesSync(newer, newerAt, newerAt);
    // A copy no version could start from (cut short by hand, say) is not offered.
    writeFileSync(join(dir, `boa.sqlite.at-${TAGS[0]}`), '');
    const file = join(dir, 'boa.sqlite');
    damage(file);

    expect(refusal(dir).message).toMatch(
      new RegExp(
        `^${file} is damaged \\(.*\\): restore it from the backup \\(docs/security\\.md\\) or from a copy boa kept before a migration, newest first: ` +
          `${newer} \\(written ${newerAt.toISOString()}\\), ${older} \\(written ${olderAt.toISOString()}\\), losing everything since the copy was written, ` +
          `or start fresh on purpose with --init`,
      ),
    );

    // Restored as a backup is (docs/security.md): the damaged file aside, the copy in its place.
    renameSync(file, `${file}.damaged`);
    copyFileSync(newer, file);
    const store = openStore(dir);
    try {
      expect(store.db.$client.prepare('SELECT count(*) FROM plans').pluck().get()).toBe(200);
    } finally {
      store.close();
    }
  });

  it('without copies, reads as before', () => {
    const dir = tempDir();
    const store = openStore(dir);
    seedPlans(store.db.$client, 200);
    store.close();
    const file = join(dir, 'boa.sqlite');
    damage(file);
    expect(refusal(dir).message).toMatch(
      new RegExp(
        `^${file} is damaged \\(.*\\): restore it from the backup \\(docs/security\\.md\\), or start fresh on purpose with --init \\(the file is then kept as ${file}\\.broken-<time>\\)$`,
      ),
    );
  });
});

describe('a database another process keeps locked', () => {
  const LOCKED =
    ' is locked by another process (SQLite: database is locked, still after waiting 5 s): close the other program using it (an sqlite3 shell with a transaction open or in exclusive locking mode, or another boa running on this file) and start again; nothing was changed';

  it('in exclusive locking mode: refused as locked, not damaged, exit 1; --init moves nothing aside', () => {
    const dir = tempDir();
    openStore(dir).close();
    const file = join(dir, 'boa.sqlite');
    const shell = otherConnection(file);
    shell.pragma('locking_mode = EXCLUSIVE');
    shell.exec('BEGIN IMMEDIATE');
    shell.prepare('SELECT count(*) FROM plans').get();
    const before = snapshot(dir);

    const error = refusal(dir);
    expect([error.exitCode, error.message]).toEqual([1, file + LOCKED]);
    let initError: unknown;
    try {
      openStore(dir, { init: true }).close();
    } catch (caught) {
      initError = caught;
    }
    expect(initError).toEqual(new StoreError(file + LOCKED));
    expect(snapshot(dir)).toEqual(before);
  }, 60_000);

  it('a write transaction open while migrations are pending: refused as locked, nothing copied or migrated', () => {
    const dir = olderDataDir(TAGS.at(-1)!, 3);
    const file = join(dir, 'boa.sqlite');
    const shell = otherConnection(file);
    shell.exec('BEGIN IMMEDIATE');
    shell.prepare('DELETE FROM plans WHERE computed_at = 0').run();
    const before = snapshot(dir);

    expect(refusal(dir).message).toBe(file + LOCKED);
    expect(snapshot(dir)).toEqual(before);

    // Once the shell lets go, the start copies and migrates, keeping what it committed.
    shell.exec('COMMIT');
    const store = openStore(dir);
    try {
      expect(store.db.$client.prepare('SELECT count(*) FROM plans').pluck().get()).toBe(2);
      expect(readdirSync(dir)).toContain(`boa.sqlite.at-${TAGS.at(-2)}`);
    } finally {
      store.close();
    }
  }, 60_000);

  it('a write in a rollback journal (the shell set journal_mode=DELETE): refused as locked', () => {
    const dir = tempDir();
    openStore(dir).close();
    const file = join(dir, 'boa.sqlite');
    const shell = otherConnection(file);
    shell.pragma('journal_mode = DELETE');
    shell.exec('BEGIN IMMEDIATE');
    shell.prepare('DELETE FROM plans').run();

    expect(refusal(dir).message).toBe(file + LOCKED);
  }, 60_000);
});
