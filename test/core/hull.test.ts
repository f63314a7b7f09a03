import { describe, expect, it } from 'vitest';
import { concaveHull, hullSpeedupAt } from '../../src/core/hull.ts';

const widths = (points: { width: number }[]) => points.map((p) => p.width);

describe('concaveHull', () => {
  it('drops a point under the chord and stops at the maximum', () => {
    // (3, 2.2) lies under the chord from (2, 1.9) to (4, 3.0), which passes 2.45 at k = 3; 8 is slower than 6.
    const hull = concaveHull([1, 2, 3, 4, 6, 8], [1, 1.9, 2.2, 3.0, 3.5, 3.2]);
    expect(widths(hull)).toEqual([1, 2, 4, 6]);
  });

  it('keeps a superlinear start: the hull begins at width 1, not at the origin', () => {
    const hull = concaveHull([1, 2, 4], [1, 2.06, 3.9]);
    expect(widths(hull)).toEqual([1, 2, 4]);
  });

  it('keeps collinear points only when asked', () => {
    const w = [1, 2, 3, 4];
    const s = [1, 2, 3, 3.5];
    expect(widths(concaveHull(w, s))).toEqual([1, 3, 4]);
    expect(widths(concaveHull(w, s, true))).toEqual([1, 2, 3, 4]);
  });

  it('keeps a listed point on a hull edge whatever the rounding of its cross product', () => {
    // 1.13 and 1.26 at 2 and 3 GPUs lie on the line from (1, 1); in floating point the turn comes out
    // a hair above zero for these decimals, which is still collinear within the tolerance.
    expect(widths(concaveHull([1, 2, 3], [1, 1.13, 1.26], true))).toEqual([1, 2, 3]);
    expect(widths(concaveHull([1, 2, 8], [1, 1.13, 1.91], true))).toEqual([1, 2, 8]);
    expect(widths(concaveHull([1, 2, 3], [1, 1.13, 1.26]))).toEqual([1, 3]);
  });

  it('makes a flat table a single point', () => {
    expect(widths(concaveHull([1, 2, 4], [1, 1, 0.9]))).toEqual([1]);
  });

  it('interpolates linearly between hull points', () => {
    const hull = concaveHull([1, 2, 4], [1, 1.8, 3.0]);
    expect(hullSpeedupAt(hull, 3)).toBeCloseTo(2.4, 12);
    expect(hullSpeedupAt(hull, 1.5)).toBeCloseTo(1.4, 12);
    expect(hullSpeedupAt(hull, 8)).toBe(3.0);
  });

  it('refuses mismatched input', () => {
    expect(() => concaveHull([1, 2], [1])).toThrow(/one speedup per width/);
  });
});
