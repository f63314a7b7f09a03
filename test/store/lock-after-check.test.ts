/**
 * A lock another process takes in the moments between the start's checks of the database and its copy
 * before migrating (an operator's sqlite3 shell opened just then): refused as locked, with the line of a
 * lock found by the checks, nothing copied or migrated; it was SQLite's raw "database is locked".
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, expect, it, vi } from 'vitest';
import { openStore } from '../../src/store/db.ts';
import { lockedRefusal } from '../../src/store/busy.ts';
import { refusal } from './refusal.ts';
import { olderDatabase, seedPlans, TAGS } from './schema-versions.ts';

/** Run once, right after the checks pass: where the test takes its lock. */
const afterChecks = vi.hoisted(() => ({ run: undefined as (() => void) | undefined }));
vi.mock('../../src/store/checks.ts', async (original) => {
  const checks = await original<typeof import('../../src/store/checks.ts')>();
  return {
    ...checks,
    databaseProblem: (...args: Parameters<typeof checks.databaseProblem>) => {
      const problem = checks.databaseProblem(...args);
      afterChecks.run?.();
      afterChecks.run = undefined;
      return problem;
    },
  };
});

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'boa-store-lock-after-check-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

it('a lock taken after the checks, before the copy kept for migrating: refused as locked, nothing copied', () => {
  const dir = tempDir();
  const file = join(dir, 'boa.sqlite');
  const older = olderDatabase(file, TAGS.at(-1)!, tempDir());
  seedPlans(older, 3);
  older.close();
  let shell: Database.Database | undefined;
  afterChecks.run = () => {
    shell = new Database(file);
    cleanups.push(() => shell?.close());
    shell.pragma('locking_mode = EXCLUSIVE');
    shell.exec('BEGIN IMMEDIATE');
    shell.prepare('SELECT count(*) FROM plans').get();
  };

  expect(refusal(dir).message).toBe(lockedRefusal(file).message);
  expect(shell, 'the lock was taken between the checks and the copy').toBeDefined();
  expect(readdirSync(dir).filter((name) => name.includes('.at-'))).toEqual([]);

  // Once the shell lets go, the start copies and migrates.
  shell?.exec('COMMIT');
  shell?.close();
  const store = openStore(dir);
  try {
    expect(store.db.$client.prepare('SELECT count(*) FROM plans').pluck().get()).toBe(3);
    expect(readdirSync(dir)).toContain(`boa.sqlite.at-${TAGS.at(-2)}`);
  } finally {
    store.close();
  }
}, 60_000);
