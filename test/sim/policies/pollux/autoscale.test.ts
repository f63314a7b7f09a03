import { describe, expect, it } from 'vitest';
import {
  clusterUtility,
  scaleVerdict,
  searchNodeCount,
  utilityBand,
  UtilityWindow,
} from '../../../../src/sim/policies/pollux/autoscale.ts';

describe('utilityBand', () => {
  it('is c +- min(0.3 (1 - c), 0.3 c): AdaptDL 0.35..0.65 at c = 0.5', () => {
    expect(utilityBand(0.5)).toEqual({
      target: 0.5,
      low: expect.closeTo(0.35, 12),
      high: expect.closeTo(0.65, 12),
    });
    // c = 0.8: D = min(0.06, 0.24) = 0.06; c = 0.2: D = min(0.24, 0.06) = 0.06.
    expect(utilityBand(0.8)).toEqual({
      target: 0.8,
      low: expect.closeTo(0.74, 12),
      high: expect.closeTo(0.86, 12),
    });
    expect(utilityBand(0.2)).toEqual({
      target: 0.2,
      low: expect.closeTo(0.14, 12),
      high: expect.closeTo(0.26, 12),
    });
  });

  it('refuses a target outside (0, 1), stating the allowed range', () => {
    for (const bad of [0, 1, -0.2, 1.5, Number.NaN]) {
      expect(() => utilityBand(bad)).toThrow(/strictly between 0 and 1, got/);
    }
  });
});

describe('scaleVerdict', () => {
  const band = utilityBand(0.8);
  it('grows above c + D and shrinks below c - D, holding inside', () => {
    expect(scaleVerdict(0.87, band, 5, 1, 10)).toBe('grow');
    expect(scaleVerdict(0.85, band, 5, 1, 10)).toBe('hold');
    expect(scaleVerdict(0.75, band, 5, 1, 10)).toBe('hold');
    expect(scaleVerdict(0.73, band, 5, 1, 10)).toBe('shrink');
  });

  it('stays within the node bounds', () => {
    expect(scaleVerdict(0.99, band, 10, 1, 10)).toBe('hold');
    expect(scaleVerdict(0.1, band, 1, 1, 10)).toBe('hold');
  });
});

describe('UtilityWindow', () => {
  it('gives the mean of the last 15 ticks once it has 15, and forgets on clear', () => {
    const window = new UtilityWindow();
    for (let i = 1; i < 15; i++) expect(window.push(i)).toBeUndefined();
    expect(window.push(15)).toBe(8); // mean of 1..15
    expect(window.push(16)).toBe(9); // mean of 2..16
    window.clear();
    expect(window.push(1)).toBeUndefined();
    expect(() => new UtilityWindow(0)).toThrow(/whole number of ticks >= 1, got 0/);
  });

  it('clusterUtility is the summed speedup per cluster GPU', () => {
    expect(clusterUtility([3, 1, 0], 8)).toBe(0.5);
    expect(clusterUtility([3], 0)).toBe(0);
  });
});

describe('searchNodeCount', () => {
  it('finds the node count whose utility is closest to the target', () => {
    // Utility 8 / n: exactly 0.5 at 16 nodes.
    expect(searchNodeCount((n) => 8 / n, 1, 100, 0.5)).toBe(16);
    // 7 / n: 0.538 at 13, 0.5 at 14, 0.467 at 15.
    expect(searchNodeCount((n) => 7 / n, 1, 100, 0.5)).toBe(14);
    // 6.6 / n: 0.508 at 13, 0.471 at 14: 13 is closer.
    expect(searchNodeCount((n) => 6.6 / n, 1, 100, 0.5)).toBe(13);
  });

  it('stops at the bounds and probes only O(log n) sizes', () => {
    let probes = 0;
    const count = (u: (n: number) => number) => (n: number) => {
      probes++;
      return u(n);
    };
    expect(
      searchNodeCount(
        count(() => 0.1),
        1,
        1000,
        0.5,
      ),
    ).toBe(1);
    expect(
      searchNodeCount(
        count(() => 0.9),
        1,
        1000,
        0.5,
      ),
    ).toBe(1000);
    probes = 0;
    searchNodeCount(
      count((n) => 300 / n),
      1,
      1000,
      0.5,
    );
    expect(probes).toBeLessThanOrEqual(13);
    expect(() => searchNodeCount(() => 1, 3, 2, 0.5)).toThrow(/0 <= lo <= hi, got 3..2/);
  });
});
