/**
 * Another process holding the database's write lock for a moment (a sqlite3 shell writing, a backup
 * tool) makes a request wait (busy_timeout, 5 s), then go through: every write, not only those whose
 * first statement writes. A history import reads before it writes, and was refused at once with
 * store_busy while a job submission beside it waited and went through (found in review).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { startService } from '../service/harness.ts';

const CHILD = join(import.meta.dirname, '..', 'store', 'write-lock-child.ts');
/** Well within the 5 s SQLite waits, well beyond a moment. */
const HOLD_MS = 1500;

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function started() {
  const dir = mkdtempSync(join(tmpdir(), 'boa-busy-wait-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const s = await startService({ dataDir: dir });
  cleanups.push(s.close);
  return { s, file: join(dir, 'boa.sqlite') };
}

/** write-lock-child.ts on `file`, resolved once it holds the lock, with a promise of its exit. */
function anotherWriter(file: string): Promise<{ exited: Promise<number | null> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, file, String(HOLD_MS)]);
  cleanups.push(() => void child.kill('SIGKILL'));
  const exited = new Promise<number | null>((done) => child.on('exit', done));
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((locked, fail) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line === 'locked') locked({ exited });
    });
    void exited.then((code) => fail(new Error(`write-lock-child.ts exited with ${code}: ${stderr}`)));
  });
}

describe('a write lock another process holds for a moment', () => {
  it('a history import and its delete (each reads, then writes) wait for it and go through', async () => {
    const { s, file } = await started();
    const arrivals = [{ className: 'cifar10', submittedAt: s.clock.now() - 3_600_000 }];

    let other = await anotherWriter(file);
    const imported = await s.request('POST', '/v1/history', { source: 'past.csv', arrivals });
    expect(imported.status).toBe(200);
    expect(await other.exited).toBe(0);

    other = await anotherWriter(file);
    const deleted = await s.request('DELETE', `/v1/history/${imported.body.import.id}`);
    expect(deleted.status).toBe(200);
    expect(await other.exited).toBe(0);

    // Both processes' writes are kept.
    expect((await s.request('GET', '/v1/history')).body.imports).toEqual([]);
    const reader = new Database(file, { readonly: true });
    try {
      const written = "SELECT count(*) FROM settings WHERE key LIKE 'writtenByAnother-%'";
      expect(reader.prepare(written).pluck().get()).toBe(2);
    } finally {
      reader.close();
    }
  }, 120_000);
});
