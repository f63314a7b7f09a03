import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  atPaid,
  atPaidTable,
  type CompareRow,
  compareCsv,
  compareTasks,
} from '../../scripts/lib/compare-report.ts';
import { jctAtPaid } from '../../src/sim/matched.ts';
import type { PolicyDefinition } from '../../src/sim/policy.ts';
import { POLLUX, runScript } from '../helpers/run-script.ts';

const TRACE = resolve(POLLUX, 'workloads/workload-1.csv');
const definition = (name: string, knob: 'budget' | 'target'): PolicyDefinition => ({
  name,
  knob,
  mode: 'autoscaled',
  describe: 'test',
  create: () => {
    throw new Error('not run');
  },
});

describe('compare tasks', () => {
  it('sweeps budgets for budget policies and targets for target policies, sharing the other options', () => {
    const tasks = compareTasks([definition('a', 'budget'), definition('b', 'target')], [10, 20], [0.5], {
      solver: 'paper',
    });
    expect(tasks).toEqual([
      { policy: 'a', options: { solver: 'paper', budget: 10 } },
      { policy: 'a', options: { solver: 'paper', budget: 20 } },
      { policy: 'b', options: { solver: 'paper', target: 0.5 } },
    ]);
  });
});

describe('compare at a matched paid usage', () => {
  const row = (policy: string, paid: number, jct: number, completed = 10) =>
    ({ policy, paidGpuHoursPerHour: paid, avgJctSeconds: jct, completed, jobs: 10 }) as CompareRow;

  it('reads each policy off at the paid usage, from complete runs only, null where not bracketed', () => {
    const rows = [row('a', 30, 3000), row('a', 50, 1000), row('b', 35, 2000), row('b', 45, 100, 9)];
    const [at40] = atPaid(rows, [40]);
    expect(at40).toEqual({ paidGpuHoursPerHour: 40, avgJctSeconds: { a: 2000, b: null } });
    expect(atPaidTable(atPaid(rows, [40]))).toMatch(/paid\s+a\s+b\n\s*40\s+2000\s+-\n$/);
  });
});

describe('compare', () => {
  const out = mkdtempSync(join(tmpdir(), 'compare-'));
  const run = runScript('compare.ts', [
    ...['--trace', TRACE, '--apps', 'cifar10', '--policies', 'boa,fixed-request'],
    ...['--budgets', '5,12,24', '--out', out, '--workers', '2', '--quiet', '--at-paid', '15,18'],
  ]);

  it('runs every policy at every budget in worker threads, skipping infeasible points with a note', () => {
    expect(run.status).toBe(0);
    expect(run.stderr).toMatch(
      /^skipped boa at budget 5: budget 5.00000 GPU-hours\/hour is below the minimum/,
    );
    const rows = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8'));
    expect(rows.map((r: any) => `${r.policy}@${r.budget}`)).toEqual([
      'boa@12',
      'boa@24',
      'fixed-request@5',
      'fixed-request@12',
      'fixed-request@24',
    ]);
    for (const row of rows) {
      expect(row.knob).toBe('budget');
      expect(row.completed).toBe(66);
    }
    // A higher budget buys boa a faster average and costs it more.
    expect(rows[1].avgJctSeconds).toBeLessThan(rows[0].avgJctSeconds);
    expect(rows[1].paidGpuHoursPerHour).toBeGreaterThan(rows[0].paidGpuHoursPerHour);
  });

  it('reads every policy off at the asked paid usages, printed and in at-paid.json', () => {
    const rows = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as CompareRow[];
    const table = JSON.parse(readFileSync(join(out, 'at-paid.json'), 'utf8'));
    expect(table.map((t: { paidGpuHoursPerHour: number }) => t.paidGpuHoursPerHour)).toEqual([15, 18]);
    const boa = rows.filter((r) => r.policy === 'boa');
    expect(table[0].avgJctSeconds.boa).toBe(jctAtPaid(boa, 15));
    expect(table[0].avgJctSeconds.boa).not.toBeNull();
    expect(run.stdout).toMatch(/^average JCT \(s\) at a matched paid usage/);
  });

  it('writes the same rows as CSV, and both charts', () => {
    const rows = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8'));
    expect(readFileSync(join(out, 'results.csv'), 'utf8')).toBe(compareCsv(rows));
    for (const chart of ['avg-jct.svg', 'p95-jct.svg']) {
      const svg = readFileSync(join(out, chart), 'utf8');
      expect(svg).toMatch(/^<svg/);
      expect(svg).toContain('fixed-request');
      expect(svg).toContain('Paid GPU-hours per hour');
    }
  });

  it('refuses an unknown policy before starting any work', () => {
    const bad = runScript('compare.ts', [
      '--trace',
      TRACE,
      '--policies',
      'boa,nope',
      '--budgets',
      '40',
      '--out',
      out,
    ]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/^error: unknown policy "nope"; allowed: /);
  });
});
