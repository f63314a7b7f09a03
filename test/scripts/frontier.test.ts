import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FrontierReport } from '../../scripts/lib/frontier-report.ts';
import { independentEvaluate } from '../helpers/independent-eval.ts';
import { POLLUX, REPO, runScript } from '../helpers/run-script.ts';

const TRACE = resolve(POLLUX, 'workloads/workload-1.csv');
const profile = JSON.parse(readFileSync(resolve(REPO, 'data/profiles.json'), 'utf8'));

function frontier(args: string[]): FrontierReport[] {
  const run = runScript('frontier.ts', ['--trace', TRACE, '--quiet', ...args]);
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  const parsed = JSON.parse(run.stdout);
  return Array.isArray(parsed) ? parsed : [parsed];
}

describe.each([
  ['cifar10,bert,deepspeech2', 'cifar10,bert,deepspeech2'],
  ['all apps but ncf', 'bert,cifar10,deepspeech2,imagenet,yolov3'],
])('frontier on workload-1, %s', (_label, apps) => {
  const [exact, paper] = frontier(['--apps', apps, '--solver', 'exact,paper']) as [
    FrontierReport,
    FrontierReport,
  ];
  const minimum = exact.minFeasibleBudget;
  const inRange = (i: number) => (exact.points[i]?.budget as number) <= 3 * minimum * (1 + 1e-9);

  it('reports rates from the whole file span and 50 default budgets from the minimum to 4x', () => {
    expect(Object.keys(exact.arrivalRatesPerHour).sort()).toEqual(apps.split(',').sort());
    expect(exact.points).toHaveLength(50);
    expect(exact.points[0]?.budget).toBeCloseTo(minimum, 9);
    expect(exact.points[49]?.budget).toBeCloseTo(4 * minimum, 9);
    expect(exact.hull?.[0]?.gpuHoursPerHour).toBeCloseTo(minimum, 9);
  });

  it('exact is never slower than the paper, and neither overspends, from the minimum to 3x', () => {
    let compared = 0;
    exact.points.forEach((e, i) => {
      if (!inRange(i)) return;
      const p = paper.points[i];
      expect(e.gpuHoursPerHour as number).toBeLessThanOrEqual(e.budget * (1 + 1e-9));
      if (p?.avgJctSeconds != null) {
        expect(p.gpuHoursPerHour as number).toBeLessThanOrEqual(p.budget * (1 + 1e-9));
        expect(e.avgJctSeconds as number).toBeLessThanOrEqual(p.avgJctSeconds * (1 + 1e-9));
        compared++;
      }
    });
    expect(compared).toBeGreaterThanOrEqual(30);
  });

  it('prints numbers that an independent evaluation of the printed widths reproduces', () => {
    for (const report of [exact, paper]) {
      for (const point of report.points) {
        if (!point.classes) continue;
        const again = independentEvaluate(profile, report.arrivalRatesPerHour, point.classes as never);
        expect(again.gpuHoursPerHour).toBeCloseTo(point.gpuHoursPerHour as number, 6);
        expect(again.avgJctSeconds).toBeCloseTo(point.avgJctSeconds as number, 4);
      }
    }
  });
});

describe('frontier script', () => {
  it('finds budgets where the exact plan is over 20% faster than the paper', () => {
    const [exact, paper] = frontier(['--apps', 'cifar10,bert,deepspeech2', '--solver', 'exact,paper']) as [
      FrontierReport,
      FrontierReport,
    ];
    const gains = exact.points.map((e, i) => {
      const p = paper.points[i]?.avgJctSeconds;
      return p ? 1 - (e.avgJctSeconds as number) / p : 0;
    });
    expect(Math.max(...gains)).toBeGreaterThan(0.2);
  });

  it('refuses a budget below the minimum and states the minimum', () => {
    const run = runScript('frontier.ts', ['--trace', TRACE, '--apps', 'cifar10', '--budgets', '0.5']);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(
      /budget 0\.500000 GPU-hours\/hour is below the minimum feasible budget \d+\.\d+/,
    );
  });

  it('names the bad option value', () => {
    expect(runScript('frontier.ts', ['--trace', TRACE, '--solver', 'greedy']).stderr).toMatch(
      /--solver: unknown greedy; allowed: exact, paper/,
    );
    expect(runScript('frontier.ts', ['--trace', TRACE, '--budgets', '10:5:1']).stderr).toMatch(
      /HI must be at least LO/,
    );
    expect(runScript('frontier.ts', ['--trace', 'nope.csv']).stderr).toMatch(
      /cannot read trace nope\.csv: no such file/,
    );
  });

  it('draws an SVG with both solvers, labelled axes and the minimum marked', () => {
    const run = runScript('frontier.ts', [
      '--trace',
      TRACE,
      '--apps',
      'cifar10,bert',
      '--solver',
      'exact,paper',
      '--format',
      'svg',
      '--quiet',
    ]);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^<svg/);
    for (const text of [
      'GPU-hours per hour allocated to jobs',
      'Average job completion time (minutes)',
      'minimum feasible',
      'exact',
      'paper',
    ]) {
      expect(run.stdout).toContain(text);
    }
  });

  it('writes CSV rows per solver and budget', () => {
    const run = runScript('frontier.ts', [
      '--trace',
      TRACE,
      '--apps',
      'cifar10',
      '--budgets',
      '10,12',
      '--format',
      'csv',
    ]);
    const lines = run.stdout.trim().split('\n');
    expect(lines[0]).toBe('solver,budget,gpu_hours_per_hour,avg_jct_seconds,solve_ms,plan');
    expect(lines).toHaveLength(3);
    expect(lines[1]).toMatch(/^exact,10,10,\d+.*cifar10=0\.\d+\*1\//);
  });
});
