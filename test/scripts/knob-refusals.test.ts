/**
 * A knob left out or mistyped is refused naming the flag and what it takes: the policies' own words
 * were "boa needs a budget: ..., got undefined" and "give its size as a budget in GPUs", and "abc" for
 * --budget or --at-paid was told "a number > 0", leaving out the multiples (1.5x) both flags take.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runScript } from '../helpers/run-script.ts';

const dir = mkdtempSync(join(tmpdir(), 'boa-knob-refusals-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const trace = join(dir, 'trace.csv');
writeFileSync(trace, 'name,time,application,num_replicas,batch_size\na,0,cifar10,1,128\nb,600,bert,1,12\n');

function refusal(script: string, args: string[]): string {
  const run = runScript(script, [...args, '--quiet']);
  expect(run.status).toBe(2);
  expect(run.stdout).toBe('');
  return run.stderr;
}

describe('simulate and compare without or with a mistyped knob', () => {
  it('simulate names --budget (and --cluster for a fixed cluster) when the policy needs it', () => {
    expect(refusal('simulate.ts', ['--trace', trace, '--policy', 'boa@oracle'])).toBe(
      "error: --policy boa@oracle needs --budget: paid GPU-hours per hour (40) or a multiple of the trace's " +
        'minimum feasible budget (1.5x)\n',
    );
    expect(refusal('simulate.ts', ['--trace', trace, '--policy', 'pollux-budget'])).toMatch(
      /^error: --policy pollux-budget needs --budget: /,
    );
    expect(refusal('simulate.ts', ['--trace', trace, '--policy', 'lyra'])).toBe(
      'error: --policy lyra runs on a fixed cluster: give --budget N (its GPUs) or --cluster g4dn:N (nodes)\n',
    );
  });

  it('--budget and --at-paid say they take multiples too', () => {
    expect(refusal('simulate.ts', ['--trace', trace, '--policy', 'boa', '--budget', '2X'])).toBe(
      'error: --budget must be a number > 0 (GPU-hours per hour) or a multiple of the minimum feasible ' +
        'budget (1.5x), got "2X"\n',
    );
    const out = join(dir, 'compare');
    expect(
      refusal('compare.ts', [
        '--trace',
        trace,
        '--policies',
        'boa',
        '--budgets',
        '8',
        '--at-paid',
        '30,abc',
        '--out',
        out,
      ]),
    ).toBe(
      'error: --at-paid takes paid GPU-hours per hour > 0 (40) or multiples of the minimum feasible budget ' +
        '(1.2x), got "abc"\n',
    );
  });
});
