/**
 * What a `boa` command loads: the CLI's own few packages, none of the service's (zod, the planner's
 * solvers, the store, the cloud SDKs, vega). Every command is a process start, and a trace reader's
 * import of one constant pulled in zod and the planner: 1.13 s of CPU a start against 0.74 s.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, expect, it } from 'vitest';

const root = mkdtempSync(join(tmpdir(), 'boa-cli-loads-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const SERVICE_ONLY =
  /^(zod|@hono\/.*|hono|drizzle-orm|better-sqlite3|pino|prom-client|vega|vega-lite|@aws-sdk\/.*|@kubernetes\/client-node)$/;

it('a boa command loads none of the service-side packages', () => {
  const loads = join(root, 'loads.txt');
  const repo = resolve(import.meta.dirname, '../..');
  // --help builds the whole program: every command's module is loaded.
  execFileSync(
    process.execPath,
    ['--import', join(repo, 'test/fixtures/record-loads.mjs'), join(repo, 'src/cli/boa.mjs'), '--help'],
    { cwd: root, env: { ...process.env, BOA_LOADS_FILE: loads }, encoding: 'utf8', timeout: 60_000 },
  );
  const packages = new Set(
    readFileSync(loads, 'utf8')
      .split('\n')
      .map((url) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1])
      .filter((name): name is string => name !== undefined),
  );
  // The recording sees what it looks for: the CLI's own packages are there.
  expect([...packages]).toEqual(expect.arrayContaining(['commander', 'cli-table3']));
  expect([...packages].filter((name) => SERVICE_ONLY.test(name))).toEqual([]);
});
