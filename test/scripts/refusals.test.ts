/**
 * Scripts refuse what they cannot measure or write, in one line with exit 2 (found in review):
 * bench:burst with a budget the service refused reported every target met, and stage-profiles answered
 * an unwritable --out with a stack trace.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runScript } from '../helpers/run-script.ts';

const dir = mkdtempSync(join(tmpdir(), 'boa-script-refusals-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('script refusals', () => {
  it('bench:burst stops when the service refuses its budget, measuring nothing', () => {
    const run = runScript('bench-burst.ts', [
      '--budget',
      '1',
      '--jobs',
      '20',
      '--ticks',
      '10',
      '--run-ticks',
      '3',
    ]);
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(
      /^error: --budget 1: the service refused it \(HTTP 422\); nothing was measured\n$/,
    );
  });

  it('stage-profiles says in one line that it cannot write --out', () => {
    const run = runScript('stage-profiles.ts', ['--out', join(dir, 'no', 'such', 'x.json')]);
    expect(run.status).toBe(2);
    expect(run.stderr).not.toContain('    at ');
    expect(run.stderr).toMatch(/^error: .*x\.json/);
  });
});
