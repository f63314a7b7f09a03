/**
 * A demo refused for its options answers before loading the service: the refusal tests spawned the demo
 * for each bad option, and each spawn loaded the service's 600-odd modules first (2.3 s of CPU a
 * refusal against 1.0 s).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { POLLUX, REPO } from '../helpers/run-script.ts';

const root = mkdtempSync(join(tmpdir(), 'boa-demo-loads-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const SERVICE_ONLY = /^(drizzle-orm|better-sqlite3|hono|@hono\/.*|pino|prom-client)$/;

it('a demo refused for a bad option loads none of the service-side packages', () => {
  const loads = join(root, 'loads.txt');
  const args = ['--trace', join(POLLUX, 'workloads/workload-1.csv'), '--budget', '40'];
  const run = spawnSync(
    process.execPath,
    [
      '--import',
      join(REPO, 'test/fixtures/record-loads.mjs'),
      '--import',
      'tsx',
      join(REPO, 'scripts/demo.ts'),
      ...args,
      '--drain-after-hours',
      '-1',
    ],
    { cwd: REPO, env: { ...process.env, BOA_LOADS_FILE: loads }, encoding: 'utf8', timeout: 60_000 },
  );
  expect(run.status, run.stderr).toBe(2);
  expect(run.stderr).toMatch(/--drain-after-hours must be a number >= 0/);
  const packages = new Set(
    readFileSync(loads, 'utf8')
      .split('\n')
      .map((url) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1])
      .filter((name): name is string => name !== undefined),
  );
  // The recording sees what it looks for: the demo's own option parser is there.
  expect([...packages]).toContain('commander');
  expect([...packages].filter((name) => SERVICE_ONLY.test(name))).toEqual([]);
});
