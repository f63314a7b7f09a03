import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runScript } from '../helpers/run-script.ts';

const metrics = (avg: number) => ({
  avgJctSeconds: avg,
  p50JctSeconds: avg / 2,
  p95JctSeconds: avg * 2,
  p99JctSeconds: avg * 3,
  avgQueueSeconds: 10,
});

describe('comparison-table', () => {
  const root = mkdtempSync(join(tmpdir(), 'comparison-table-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const dir = join(root, 'trace-a');
  mkdirSync(dir);
  const series = {
    boa: metrics(900),
    'boa (oracle rates)': metrics(800),
    'pollux-autoscale': metrics(1000),
    'pollux-budget': metrics(1100),
    // boa's at a constant price: faster than all, and still never "the best other".
    'boa-price': metrics(700),
    lyra: null,
  };
  const avg = Object.fromEntries(Object.entries(series).map(([k, v]) => [k, v?.avgJctSeconds ?? null]));
  writeFileSync(
    join(dir, 'at-paid.json'),
    JSON.stringify([{ paidGpuHoursPerHour: 60, minimumMultiple: 1.2, avgJctSeconds: avg, metrics: series }]),
  );
  writeFileSync(
    join(dir, 'results.json'),
    JSON.stringify([
      { policy: 'boa', rates: 'online', budget: 60, paidGpuHoursPerHour: 63 },
      { policy: 'boa', rates: 'oracle', budget: 60, paidGpuHoursPerHour: 50 },
    ]),
  );
  const run = runScript('comparison-table.ts', [dir]);

  it('names the best other policy (never boa with oracle rates) and compares boa with it', () => {
    expect(run.status).toBe(0);
    expect(run.stdout).toContain(
      '| trace-a | 60.0 (1.2x) | 900 / 1800 | 800 / 1600 | pollux-autoscale | 1000 / 2000 | 1000 / 2000 | 1100 / 2200 | 0.90x |',
    );
  });

  it('sets each constant knob against the other and each budget held against the other', () => {
    const [, pairs] = run.stdout.split('At equal information');
    expect(pairs).toContain(
      '| trace-a | 60.0 (1.2x) | 700 / 1400 | 1000 / 2000 | 0.70x | 900 / 1800 | 1100 / 2200 | 0.82x |',
    );
  });

  it("states boa's online paid spend against its budget, as a multiple of the minimum", () => {
    expect(run.stdout).toContain('| trace-a | 60 (1.2x): +5% |');
  });

  it("states the spend of boa's own series only, not of a boa variant's beside it", () => {
    const withVariants = join(root, 'trace-b');
    mkdirSync(withVariants);
    writeFileSync(
      join(withVariants, 'at-paid.json'),
      JSON.stringify([
        { paidGpuHoursPerHour: 60, minimumMultiple: 1.2, avgJctSeconds: avg, metrics: series },
      ]),
    );
    // compare --policies boa,boa@cap2 --prior-from ...: every one boa online at budget 60.
    const boa = { policy: 'boa', rates: 'online', budget: 60 };
    writeFileSync(
      join(withVariants, 'results.json'),
      JSON.stringify([
        { ...boa, paidGpuHoursPerHour: 63 },
        { ...boa, label: 'boa (plan cap 2x)', paidGpuHoursPerHour: 75 },
        { ...boa, label: 'boa (prior from 2 other traces)', paidGpuHoursPerHour: 54 },
        // --solver paper: unlabelled in results.json, its own series all the same.
        { ...boa, solver: 'paper', paidGpuHoursPerHour: 48 },
      ]),
    );
    const table = runScript('comparison-table.ts', [withVariants]);
    expect(table.status, table.stderr).toBe(0);
    expect(table.stdout).toContain('| trace-b | 60 (1.2x): +5% |');
  });

  it('never reads a boa variant as the best other: boa@firstday2, boa-price@ceilingB, an oracle prior', () => {
    const variants = join(root, 'trace-c');
    mkdirSync(variants);
    const withBoas = {
      ...series,
      'boa (first-day arrivals 2)': metrics(600),
      'boa-price (ceiling at 60)': metrics(650),
      'boa (oracle prior)': metrics(500),
    };
    const avgs = Object.fromEntries(Object.entries(withBoas).map(([k, v]) => [k, v?.avgJctSeconds ?? null]));
    writeFileSync(
      join(variants, 'at-paid.json'),
      JSON.stringify([
        { paidGpuHoursPerHour: 60, minimumMultiple: 1.2, avgJctSeconds: avgs, metrics: withBoas },
      ]),
    );
    writeFileSync(
      join(variants, 'results.json'),
      JSON.stringify([
        { policy: 'boa', rates: 'online', budget: 60, paidGpuHoursPerHour: 63 },
        { policy: 'boa', rates: 'online', label: 'boa (first-day arrivals 2)', budget: 60 },
        { policy: 'boa-price', rates: null, label: 'boa-price (ceiling at 60)', budget: 60, price: 0.1 },
        { policy: 'boa', rates: 'prior', budget: 60 },
        { policy: 'pollux-autoscale', rates: null, target: 0.5 },
      ]),
    );
    const table = runScript('comparison-table.ts', [variants]);
    expect(table.status, table.stderr).toBe(0);
    expect(table.stdout).toContain('| 800 / 1600 | pollux-autoscale | 1000 / 2000 |');
    expect(table.stdout).toContain('| 0.90x |');
  });

  it('shows a paid point given absolute (compare --at-paid 40,1.6x) without a multiple, not "(-x)"', () => {
    // As data/charts/compare-workload-1, read at --at-paid 30,40,60: it printed "30.0 (-x)".
    const mixed = join(root, 'trace-d');
    mkdirSync(mixed);
    writeFileSync(
      join(mixed, 'at-paid.json'),
      JSON.stringify([
        { paidGpuHoursPerHour: 40, avgJctSeconds: avg, metrics: series },
        { paidGpuHoursPerHour: 60, minimumMultiple: 1.2, avgJctSeconds: avg, metrics: series },
      ]),
    );
    writeFileSync(
      join(mixed, 'results.json'),
      JSON.stringify([{ policy: 'boa', rates: 'online', budget: 60, paidGpuHoursPerHour: 63 }]),
    );
    const table = runScript('comparison-table.ts', [mixed]);
    expect(table.status, table.stderr).toBe(0);
    expect(table.stdout).toContain('| trace-d | 40.0 | 900 / 1800 |');
    expect(table.stdout).toContain('| trace-d | 60.0 (1.2x) | 900 / 1800 |');
    expect(table.stdout).not.toContain('(-x)');
    // The minimum is known from the point given as a multiple, though it is not the first.
    expect(table.stdout).toContain('| trace-d | 60 (1.2x): +5% |');
  });

  it('has --help, and says in one line which folder or file is missing (no stack trace)', () => {
    const help = runScript('comparison-table.ts', ['--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^Usage: comparison-table \[options\] <dirs\.\.\.>/);
    const missing = runScript('comparison-table.ts', [join(root, 'missing')]);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toBe(
      `error: ${join(root, 'missing')}: no such folder; give folders compare wrote\n`,
    );
    const plain = join(root, 'plain');
    mkdirSync(plain);
    writeFileSync(join(plain, 'results.json'), '[]');
    const noTable = runScript('comparison-table.ts', [plain]);
    expect(noTable.status).toBe(2);
    expect(noTable.stderr).toBe(
      `error: cannot read ${join(plain, 'at-paid.json')}: no such file (compare writes it with --at-paid)\n`,
    );
  });
});
