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

const repo = resolve(import.meta.dirname, '../..');

let runs = 0;
/** The module URLs `boa args` loads, one each. */
function loadsOf(args: string[]): string[] {
  const loads = join(root, `loads-${(runs += 1)}.txt`);
  execFileSync(
    process.execPath,
    ['--import', join(repo, 'test/fixtures/record-loads.mjs'), join(repo, 'src/cli/boa.mjs'), ...args],
    { cwd: root, env: { ...process.env, BOA_LOADS_FILE: loads }, encoding: 'utf8', timeout: 60_000 },
  );
  return [...new Set(readFileSync(loads, 'utf8').split('\n').filter(Boolean))];
}

it('a boa command loads none of the service-side packages', () => {
  // --help builds the whole program: every command's module is loaded.
  const packages = new Set(
    loadsOf(['--help'])
      .map((url) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1])
      .filter((name): name is string => name !== undefined),
  );
  // The recording sees what it looks for: the CLI's own packages are there.
  expect([...packages]).toEqual(expect.arrayContaining(['commander', 'cli-table3']));
  expect([...packages].filter((name) => SERVICE_ONLY.test(name))).toEqual([]);
});

// Loading every command's modules for each start cost a sixth of its CPU (0.84 s against 0.74 s).
it("a boa command loads its own command's modules, not the others'", () => {
  const commands = (urls: string[]) =>
    urls
      .map((url) => /src\/cli\/commands\/([\w-]+)\.ts$/.exec(url)?.[1])
      .filter((name): name is string => name !== undefined)
      .sort();
  // The URL is given after the command (as a script may), and --help ends the command before any request.
  expect(commands(loadsOf(['status', '--url', 'http://127.0.0.1:9', '--help']))).toEqual(['status']);
  expect(commands(loadsOf(['--url', 'http://127.0.0.1:9', 'budget', 'set', '--help']))).toEqual([
    'budget',
    'budget-classes',
    'budget-questions',
  ]);
});
