/**
 * Starts refused or let through by what is in the environment and the data dir, as `npm start` runs
 * them (found in review, 2026-12-04).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { unusedPort } from '../cli/cli-harness.ts';
import { runToExit } from './process-harness.ts';

const root = mkdtempSync(join(tmpdir(), 'boa-main-refusals-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

it('takes an empty BOA_LOG_FORMAT for unset, as every empty variable, not a bad choice', async () => {
  // Port 0 is refused after the flags and the environment are read: getting that far is the point.
  const run = await runToExit(['--port', '0', '--data', join(root, 'log-format')], { BOA_LOG_FORMAT: '' });
  expect(run.stderr).not.toContain('BOA_LOG_FORMAT');
  expect(run.stderr).toMatch(/--port/);
  expect(run.code).toBe(2);
}, 60_000);

it('names the token file when a folder stands where it goes (a bind mount of a missing host file)', async () => {
  const dataDir = join(root, 'token-a-folder');
  mkdirSync(join(dataDir, 'token'), { recursive: true });
  const run = await runToExit(['--port', String(await unusedPort()), '--data', dataDir], {
    BOA_LOG_LEVEL: 'silent',
  });
  expect(run.stderr).toContain(`cannot read ${join(dataDir, 'token')}: it is a directory, not a file`);
  expect(run.code).not.toBe(0);
}, 60_000);
