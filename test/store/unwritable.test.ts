/**
 * A data dir, or a file in it, that boa may not write is refused naming the path and why (permission
 * denied, a read-only file system, a directory in a file's place): SQLite's own "unable to open
 * database file" named neither (found in a trial, as another user on a read-only data dir).
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openStore } from '../../src/store/db.ts';
import { refusal } from './refusal.ts';

/** Paths whose write access the file system refuses, and how: as root, chmod alone refuses nothing. */
const refused = new Map<string, string>();
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const accessSync = (path: import('node:fs').PathLike, mode?: number) => {
    const code = refused.get(String(path));
    if (code !== undefined && mode !== undefined && mode & fs.constants.W_OK)
      throw Object.assign(new Error(`${code}: access '${String(path)}'`), { code });
    return fs.accessSync(path, mode);
  };
  return { ...fs, accessSync, default: { ...fs, accessSync } };
});

const dirs: string[] = [];
afterEach(() => {
  refused.clear();
  for (const dir of dirs.splice(0)) {
    chmodSync(dir, 0o700);
    rmSync(dir, { recursive: true, force: true });
  }
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'boa-unwritable-'));
  dirs.push(dir);
  return dir;
}

const uid = process.getuid ? ` \\(uid ${process.getuid()}\\)` : '';

describe('a data dir boa cannot write', () => {
  it('refuses a data dir it may not write, naming it and why (exit code 2), before the lock', () => {
    const dir = dataDir();
    refused.set(dir, 'EACCES');
    const error = refusal(dir);
    expect(error.exitCode).toBe(2);
    expect(error.message).toMatch(
      new RegExp(
        `^data dir ${dir} is not writable: permission denied for the user boa runs as${uid}: .*give another --data$`,
      ),
    );
  });

  it('refuses a database on a read-only file system, naming the file', () => {
    const dir = dataDir();
    openStore(dir).close();
    refused.set(join(dir, 'boa.sqlite'), 'EROFS');
    expect(refusal(dir).message).toMatch(
      new RegExp(`^${join(dir, 'boa.sqlite')} is not writable: a read-only file system: boa writes to it`),
    );
  });

  it('names the lock file and why when SQLite cannot open it (a directory in its place)', () => {
    const dir = dataDir();
    mkdirSync(join(dir, 'boa.lock'));
    expect(refusal(dir).message).toBe(
      `cannot lock data dir ${dir}: ${join(dir, 'boa.lock')} is a directory, not a file`,
    );
  });

  it.skipIf(process.getuid?.() === 0)(
    'refuses a data dir chmod 555, unmocked (skipped as root: root writes there anyway)',
    () => {
      const dir = dataDir();
      writeFileSync(join(dir, 'keep'), 'x');
      chmodSync(dir, 0o555);
      expect(refusal(dir).message).toMatch(/^data dir .* is not writable: permission denied/);
    },
  );
});
