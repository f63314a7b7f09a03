/**
 * `--budget 0.5` on a fresh data dir started and its jobs waited for the budget for ever (found in a
 * newcomer trial): the start is refused as any bad setting is, and leaves no data dir behind.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { unusedPort } from '../cli/cli-harness.ts';
import { runToExit } from './process-harness.ts';

const root = mkdtempSync(join(tmpdir(), 'boa-startup-budget-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('a starting budget below one job of the cheapest class', () => {
  it('exits 2 with one line naming the setting and the smallest budget, the fresh data dir gone', async () => {
    const data = join(root, 'fresh');
    const run = await runToExit(['--data', data, '--port', String(await unusedPort()), '--budget', '0.5']);
    expect(run.code, run.stderr).toBe(2);
    const lines = run.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^boa: starting budget \(budget in the config file, BOA_BUDGET or --budget\): budget 0\.5 GPU-hours\/hour cannot keep even one job running: .* The smallest accepted budget is 4\./,
    );
    expect(existsSync(data)).toBe(false);
  }, 120_000);
});
