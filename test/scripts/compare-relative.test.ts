import { describe, expect, it } from 'vitest';
import { relativeList, SENSITIVITY_ENTRIES, sensitivityTable } from '../../scripts/lib/compare-relative.ts';
import { parseBudgets } from '../../scripts/lib/budgets.ts';

const parse = (text: string) => {
  const parsed = parseBudgets(text);
  if (parsed.kind !== 'list') throw new Error('no list');
  return parsed.budgets;
};

describe('values as multiples of the minimum feasible budget', () => {
  it('multiplies lists and ranges given in x, and computes the minimum only then', () => {
    let asked = 0;
    const minimum = () => {
      asked++;
      return 50;
    };
    expect(relativeList('30,40', minimum, parse)).toEqual({
      values: [30, 40],
      points: [{ paid: 30 }, { paid: 40 }],
    });
    expect(asked).toBe(0);
    expect(relativeList('1.2x,2.5x', minimum, parse).points).toEqual([
      { paid: 60, minimumMultiple: 1.2 },
      { paid: 125, minimumMultiple: 2.5 },
    ]);
    expect(relativeList('1x:2x:0.5x', minimum, parse).values).toEqual([50, 75, 100]);
  });

  it('rounds budgets up, so 1x is never below the minimum it multiplies', () => {
    const minimum = 38.4962393;
    const [budget] = relativeList('1x', () => minimum, parse).values;
    expect(budget).toBe(38.49624);
    expect(budget).toBeGreaterThanOrEqual(minimum);
  });

  it('refuses a mix of absolute and relative values', () => {
    expect(() => relativeList('1.2x,40', () => 50, parse)).toThrow(/every value as a multiple/);
    expect(() => relativeList('1.2x,0x', () => 50, parse)).toThrow(
      /^"0x" in "1.2x,0x": a multiple of the minimum feasible budget is a positive number then x \(1\.2x\)$/,
    );
    expect(() => relativeList('x', () => 50, parse)).toThrow(/^"x" in "x": a multiple/);
  });

  it("quotes what was given, x and all, when the values' parser refuses them", () => {
    expect(() => relativeList('1x:3x', () => 50, parse)).toThrow(/"1x:3x"/);
    expect(() => relativeList('1x:3x', () => 50, parse)).not.toThrow(/"1:3"/);
  });
});

describe('compare --sensitivity', () => {
  it('prints each Pollux setting against boa online and with oracle rates', () => {
    const labels = SENSITIVITY_ENTRIES.map((e) => e.label);
    const avg = Object.fromEntries(labels.map((l, i) => [l, 1000 + 100 * i]));
    const text = sensitivityTable([{ paidGpuHoursPerHour: 40, avgJctSeconds: avg, metrics: {} }]);
    // boa online 1000 s, oracle 1100 s, the old default (cap on, window 15, freeze) 1200 s.
    expect(text).toContain('| cap on, window 15, boot freeze | 1200 s | 1.09x | 1.20x |');
    expect(text).toContain('| cap off, window 1 | 1600 s |');
    expect(text).toContain('| cap off, window 1, no interference avoidance | 1700 s |');
  });
});
