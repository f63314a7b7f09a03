/**
 * A start whose SQLite driver cannot load (better-sqlite3's native binding missing, or built for
 * another Node) is refused saying so and what to do, not as a problem of the lock file: the lock is the
 * first database a start opens, and its message once read "boa.lock is Could not locate the bindings
 * file" (found in review). The driver is made to fail by a module mock, never in the shared node_modules.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { refusal } from './refusal.ts';

/** What the driver throws when asked to open a database; undefined: it opens as usual. */
let driverFailure: Error | undefined;
vi.mock('better-sqlite3', async (importOriginal) => {
  const { default: Database } = await importOriginal<{ default: typeof import('better-sqlite3') }>();
  // better-sqlite3 loads its binding in the constructor, on the first open, so that is where it fails.
  class FailingDatabase extends Database {
    constructor(...args: ConstructorParameters<typeof Database>) {
      if (driverFailure) throw driverFailure;
      super(...args);
    }
  }
  return { default: FailingDatabase };
});

const dirs: string[] = [];
afterEach(() => {
  driverFailure = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'boa-lock-driver-'));
  dirs.push(dir);
  return dir;
}

const reinstall = `reinstall boa's dependencies with npm ci, under the Node that runs boa (${process.version})`;

/** What `load` throws: the driver's own loaders' errors, made for real, not written out here. */
function thrownBy(load: () => unknown): Error {
  try {
    load();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the load to fail');
}

// better-sqlite3 finds its binding with the bindings package, as required from its own lib/.
const requireAsDriver = createRequire(createRequire(import.meta.url).resolve('better-sqlite3'));

describe('a SQLite driver that cannot load', () => {
  it('is named when the binding file is missing, without the list of paths tried', () => {
    const dir = dataDir();
    // The bindings package's error for a package with no built binding, its list of a dozen paths tried.
    const bindings = requireAsDriver('bindings') as (opts: object) => unknown;
    driverFailure = thrownBy(() => bindings({ bindings: 'better_sqlite3.node', module_root: dataDir() }));
    expect(driverFailure.message).toMatch(/^Could not locate the bindings file. Tried:\n/);
    expect(refusal(dir).message).toBe(
      `cannot lock data dir ${dir}: the SQLite driver (better-sqlite3) failed to load: Could not locate the bindings file; ${reinstall}`,
    );
  });

  it('is named when a module it loads with is missing, without the require stack', () => {
    const dir = dataDir();
    // Node's error for the driver's `bindings` helper gone from node_modules (a partial install).
    driverFailure = thrownBy(() => requireAsDriver('boa-test-no-such-module'));
    expect(driverFailure.message).toMatch(/\nRequire stack:\n/);
    expect(refusal(dir).message).toBe(
      `cannot lock data dir ${dir}: the SQLite driver (better-sqlite3) failed to load: Cannot find module 'boa-test-no-such-module'; ${reinstall}`,
    );
  });

  it('is named when the binding is no loadable library (a broken build)', () => {
    const dir = dataDir();
    const binding = join(dataDir(), 'better_sqlite3.node');
    writeFileSync(binding, 'not a shared library');
    driverFailure = thrownBy(() => process.dlopen({ exports: {} }, binding));
    expect((driverFailure as NodeJS.ErrnoException).code).toBe('ERR_DLOPEN_FAILED');
    // Node's reason after the path is the system loader's (glibc: "file too short").
    const { message } = refusal(dir);
    expect(
      message.startsWith(
        `cannot lock data dir ${dir}: the SQLite driver (better-sqlite3) failed to load: ${binding}: `,
      ),
      message,
    ).toBe(true);
    expect(message.endsWith(`; ${reinstall}`), message).toBe(true);
  });

  it('is named when the binding was built for another Node, on one line', () => {
    const dir = dataDir();
    // Node's words (only another Node's build makes them), over several lines.
    driverFailure = Object.assign(
      new Error(
        "The module '/app/node_modules/better-sqlite3/build/Release/better_sqlite3.node'\nwas compiled against a different Node.js version using\nNODE_MODULE_VERSION 115. This version of Node.js requires\nNODE_MODULE_VERSION 127.",
      ),
      { code: 'ERR_DLOPEN_FAILED' },
    );
    expect(refusal(dir).message).toBe(
      `cannot lock data dir ${dir}: the SQLite driver (better-sqlite3) failed to load: The module '/app/node_modules/better-sqlite3/build/Release/better_sqlite3.node' was compiled against a different Node.js version using NODE_MODULE_VERSION 115. This version of Node.js requires NODE_MODULE_VERSION 127; ${reinstall}`,
    );
  });

  it('an error from SQLite on a lock file the file system lets boa open is SQLite, not the file', () => {
    const dir = dataDir();
    driverFailure = Object.assign(new Error('unable to open database file'), { code: 'SQLITE_CANTOPEN' });
    expect(refusal(dir).message).toBe(
      `cannot lock data dir ${dir}: SQLite cannot open ${join(dir, 'boa.lock')}: unable to open database file`,
    );
  });

  it('opens as usual once the driver loads (the mock passes through)', () => {
    const dir = dataDir();
    expect(() => refusal(dir)).toThrow('opened a data dir that should have been refused');
  });
});
