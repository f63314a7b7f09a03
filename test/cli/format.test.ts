import { describe, expect, it } from 'vitest';
import { renderFrontier } from '../../src/cli/commands/frontier.ts';
import { dollars, duration, keyValues, significant, table } from '../../src/cli/format.ts';

describe('table', () => {
  it('aligns columns two spaces apart, numbers to the right, without trailing spaces', () => {
    const out = table(
      ['class', 'jobs/h', 'e0'],
      [
        ['cifar10', '8.00', 16],
        ['ncf', '12.50', 4],
      ],
    );
    expect(out).toBe(['class    jobs/h  e0', 'cifar10    8.00  16', 'ncf       12.50   4', ''].join('\n'));
  });

  it('shows a missing value as "-" and keeps a blank cell blank', () => {
    const lines = table(
      ['a', 'b', 'c'],
      [
        ['x', null, ''],
        ['y', 2, 3],
      ],
    ).split('\n');
    expect(lines[1]).toBe('x  -');
    expect(lines[2]).toBe('y  2  3');
  });

  it('aligns a column of missing values only to the left, as text (jobs list with no notes)', () => {
    const lines = table(
      ['id', 'note'],
      [
        [1, null],
        [20, null],
      ],
    ).split('\n');
    expect(lines).toEqual(['id  note', ' 1  -', '20  -', '']);
  });
});

describe('formats', () => {
  it.each([
    [0, '0s'],
    [59.6, '1m'],
    [560.9, '9m 21s'],
    [3600, '1h'],
    [90_061, '1d 1h 1m'],
  ])('duration(%d) = %s', (seconds, text) => expect(duration(seconds)).toBe(text));

  it('keeps four significant digits for budgets of any size', () => {
    expect(significant(0.00016650083)).toBe('0.0001665');
    expect(significant(15.432441376)).toBe('15.43');
    expect(significant(1234.5678)).toBe('1235');
    expect(significant(null)).toBe('-');
  });

  it('writes dollars with thousands separators and cents', () => {
    expect(dollars(28557.6)).toBe('$28,557.60');
    expect(dollars(null)).toBe('-');
  });

  it('aligns key-value lines on the longest key', () => {
    expect(
      keyValues([
        ['a', 1],
        ['long key', 'v'],
      ]),
    ).toBe('a         1\nlong key  v\n');
  });
});

describe('renderFrontier', () => {
  it('shows vertices that print the same once, and says how many there are', () => {
    const out = renderFrontier({
      ratesPerHour: { cifar10: 8 },
      minFeasibleBudget: 10,
      vertices: [
        { gpuHoursPerHour: 10, avgJctSeconds: 4000 },
        { gpuHoursPerHour: 10.0000001, avgJctSeconds: 3999.9999 },
        { gpuHoursPerHour: 12, avgJctSeconds: 3000 },
      ],
    });
    expect(out).toMatch(/^vertices\s+3 \(2 distinct to the digits shown\)$/m);
    const rows = out.trimEnd().split('\n').slice(-2);
    expect(rows.map((r) => r.trim().split(/\s+/).slice(0, 2))).toEqual([
      ['10', '4000'],
      ['12', '3000'],
    ]);
  });

  it("says the JCTs are the model's, and that a budget below the minimum queues jobs", () => {
    const out = renderFrontier({
      ratesPerHour: { cifar10: 7.03, bert: 0.76 },
      minFeasibleBudget: 82.73,
      budget: 40,
      plan: { gpuHoursPerHour: 82.76, avgJctSeconds: 17053 },
      vertices: [
        { gpuHoursPerHour: 82.73, avgJctSeconds: 17053 },
        { gpuHoursPerHour: 216.9, avgJctSeconds: 955 },
      ],
    });
    expect(out).toMatch(
      /^your budget\s+40 GPU-hours\/hour: below the minimum, jobs wait for it when even the cheapest widths do not fit/m,
    );
    expect(out).toMatch(/^current plan\s+82\.76 GPU-hours\/hour allocated, average JCT 4h 44m 13s$/m);
    expect(out).toContain('no queueing, no node boot');
    expect(out).toMatch(/^allocated GPU-h\/h\s+avg JCT s\s+avg JCT$/m);
  });

  it('shows the paid minimum its "below the minimum" compares the budget with, the allocated one beside it', () => {
    // Found in review: "minimum feasible 30" and then "your budget 33: below the minimum".
    const out = renderFrontier({
      ratesPerHour: { cifar10: 3 },
      minFeasibleBudget: 30,
      minFeasiblePaidBudget: 36,
      budget: 33,
      plan: { gpuHoursPerHour: 30, avgJctSeconds: 5000 },
      vertices: [
        { gpuHoursPerHour: 30, avgJctSeconds: 5000 },
        { gpuHoursPerHour: 60, avgJctSeconds: 2000 },
      ],
    });
    expect(out).toMatch(/^minimum feasible\s+36 GPU-hours\/hour paid \(30 allocated to jobs\)$/m);
    expect(out).toMatch(/^your budget\s+33 GPU-hours\/hour: below the minimum/m);
  });

  it('shows no frontier before any arrivals: its budgets would be ten-thousandths of a GPU', () => {
    const out = renderFrontier({
      ratesPerHour: { cifar10: 0, bert: 0 },
      minFeasibleBudget: 0.0001665,
      budget: null,
      plan: null,
      vertices: [
        { gpuHoursPerHour: 0.0001665, avgJctSeconds: 98806 },
        { gpuHoursPerHour: 0.0003867, avgJctSeconds: 4099 },
      ],
    });
    expect(out).toMatch(/^arrivals \(jobs\/h\)\s+none yet$/m);
    expect(out).toMatch(/^no arrivals yet \(no jobs, imported history or prior rates\): a frontier needs/m);
    expect(out).toContain('boa history import');
    expect(out).not.toContain('0.0001665');
  });

  it('says how much of the rate window the rates rest on while it is not full', () => {
    const f = {
      ratesPerHour: { cifar10: 1.08 },
      minFeasibleBudget: 1.1,
      vertices: [{ gpuHoursPerHour: 1.1, avgJctSeconds: 3000 }],
    };
    const young = renderFrontier({ ...f, rateWindow: { observedHours: 0.04, windowHours: 24 } });
    expect(young).toMatch(
      /^rates\s+0\.0 of the rate window's 24 h observed: the frontier moves as arrivals come/m,
    );
    const full = renderFrontier({ ...f, rateWindow: { observedHours: 24, windowHours: 24 } });
    expect(full).not.toMatch(/^rates /m);
  });
});
