/**
 * A disk that fails the database's writes while boa runs (SQLITE_IOERR_*: a failing disk, a file system
 * the kernel remounted read-only) is a 503 naming it, as a full disk is: `store_io_error`, or
 * `store_read_only` when the data dir can no longer be written. Before, each was a 500 "internal error",
 * and store_read_only held only for a file system read-only at the start (SQLITE_READONLY). The log
 * names the file and SQLite's code. The errors are injected with the codes SQLite gives; the read-only
 * file system is a real one, a read-only tmpfs mounted over the data dir (root only, else skipped).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { failTransactions } from '../helpers/store-fault.ts';
import { startService } from '../service/harness.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'boa-io-error-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A service on a data dir of its own, its log lines kept. */
async function started(dataDir: string) {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const s = await startService({ dataDir, logger });
  cleanups.push(s.close);
  return { s, lines };
}

const CAN_MOUNT = (() => {
  if (process.getuid?.() !== 0) return false;
  const dir = mkdtempSync(join(tmpdir(), 'boa-io-mount-'));
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=1m', 'tmpfs', dir]).status === 0;
  if (mounted) spawnSync('umount', [dir]);
  rmSync(dir, { recursive: true, force: true });
  return mounted;
})();

describe('a disk that fails the store while boa runs', () => {
  for (const code of ['SQLITE_IOERR_WRITE', 'SQLITE_IOERR_FSYNC']) {
    it(`${code} is a 503 store_io_error; the log names the file and the code; nothing is kept`, async () => {
      const dir = tempDir();
      const { s, lines } = await started(dir);
      failTransactions(s.db.$client, code, 'disk I/O error');
      const refused = await s.request('POST', '/v1/jobs', { class: 'cifar10', name: 'a' });
      expect(refused.status).toBe(503);
      expect(refused.body.error.code).toBe('store_io_error');
      expect(refused.body.error.message).toMatch(
        new RegExp(`^the disk failed a read or write of the database \\(${code}: disk I/O error\\)`),
      );
      const logged = lines.find((l) => l.event === 'store_io_error');
      expect(logged).toMatchObject({ file: join(dir, 'boa.sqlite'), sqliteCode: code, path: '/v1/jobs' });
      expect(logged?.level).toBe(50);
      expect((await s.request('GET', '/v1/jobs')).body.jobs).toEqual([]);
      expect((await s.request('POST', '/v1/jobs', { class: 'cifar10', name: 'a' })).status).toBe(201);
      expect((await s.request('GET', '/v1/jobs')).body.jobs.map((j: any) => j.name)).toEqual(['a']);
    });
  }

  it.skipIf(!CAN_MOUNT).each([
    // What SQLite gives for a write to a file system turned read-only (EROFS)
    'SQLITE_IOERR_WRITE',
    // What it gives when it cannot set up the WAL's shared memory there
    'SQLITE_READONLY_CANTINIT',
  ])(
    'on a file system turned read-only after the start, %s is a 503 store_read_only naming the folder',
    async (code) => {
      const dir = tempDir();
      const { s, lines } = await started(dir);
      // Over the data dir, as the kernel's remount would leave it; the open files stay writable.
      expect(spawnSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=1m', 'tmpfs', dir]).status).toBe(0);
      let mounted = true;
      const unmount = () => {
        if (mounted) expect(spawnSync('umount', [dir]).status).toBe(0);
        mounted = false;
      };
      cleanups.push(unmount);
      failTransactions(s.db.$client, code, 'disk I/O error');
      const refused = await s.request('POST', '/v1/jobs', { class: 'cifar10', name: 'a' });
      expect(refused.status).toBe(503);
      expect(refused.body.error.code).toBe('store_read_only');
      expect(refused.body.error.message).toBe(
        `the database cannot be written (${code}: ${dir} is not writable: a read-only file system): ` +
          'this request was refused; make it writable and try again',
      );
      expect(lines.find((l) => l.event === 'store_read_only')).toMatchObject({
        file: join(dir, 'boa.sqlite'),
        sqliteCode: code,
      });
      unmount();
      expect((await s.request('GET', '/v1/jobs')).body.jobs).toEqual([]);
      expect((await s.request('POST', '/v1/jobs', { class: 'cifar10', name: 'a' })).status).toBe(201);
    },
  );
});
