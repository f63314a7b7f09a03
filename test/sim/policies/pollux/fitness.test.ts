import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  FAIRNESS_POWER,
  fitness,
  fitnessCost,
  powerMean,
  restartFactor,
  SPEEDUP_FLOOR,
} from '../../../../src/sim/policies/pollux/fitness.ts';

describe('powerMean', () => {
  it('is the harmonic, geometric and arithmetic mean at p = -1, 0, 1 (by hand: 1 and 4)', () => {
    expect(powerMean([1, 4], -1)).toBeCloseTo(2 / (1 + 1 / 4), 12); // 1.6
    expect(powerMean([1, 4], 0)).toBeCloseTo(2, 12);
    expect(powerMean([1, 4], 1)).toBeCloseTo(2.5, 12);
  });

  it('refuses empty or non-positive values and a non-finite exponent, naming them', () => {
    expect(() => powerMean([], -1)).toThrow(/at least one value/);
    expect(() => powerMean([1, 0], -1)).toThrow(/positive and finite, got 0/);
    expect(() => powerMean([1], Number.NaN)).toThrow(/exponent must be finite, got NaN/);
  });
});

describe('fitness', () => {
  it('is the p = -1 mean of speedups plus the floor: a starved job sinks the cluster', () => {
    // Speedups 2 and 0: harmonic mean of 2.001 and 0.001.
    const expected = 2 / (1 / (2 + SPEEDUP_FLOOR) + 1 / SPEEDUP_FLOOR);
    expect(fitness([2, 0])).toBeCloseTo(expected, 12);
    expect(fitness([2, 0])).toBeLessThan(0.0021);
    expect(fitness([1, 1])).toBeGreaterThan(fitness([2, 0.1]));
  });

  it('ranks allocations exactly as the summed per-job costs do, for any p', () => {
    const speedups = fc.array(fc.double({ min: 0, max: 64, noNaN: true }), { minLength: 3, maxLength: 3 });
    fc.assert(
      fc.property(speedups, speedups, fc.constantFrom(-2, FAIRNESS_POWER, 0, 0.5, 1), (a, b, p) => {
        const byMean = fitness(a, p) - fitness(b, p);
        const byCost =
          a.reduce((s, x) => s + fitnessCost(x, p), 0) - b.reduce((s, x) => s + fitnessCost(x, p), 0);
        if (Math.abs(byMean) > 1e-9 * Math.max(1, fitness(a, p))) {
          expect(Math.sign(byCost)).toBe(-Math.sign(byMean));
        }
      }),
    );
  });
});

describe('restartFactor', () => {
  it('is the share of the job life spent progressing had every restart cost the delay', () => {
    // Age 300 s, 2 restarts of 30 s: (300 - 60) / (300 + 30).
    expect(restartFactor(300, 2, 30)).toBeCloseTo(240 / 330, 12);
    expect(restartFactor(0, 0, 30)).toBe(0);
    expect(restartFactor(100, 5, 30)).toBe(0);
    expect(restartFactor(1e9, 0, 30)).toBeCloseTo(1, 6);
  });

  it('names the bad argument', () => {
    expect(() => restartFactor(-1, 0, 30)).toThrow(/age must be .* >= 0, got -1/);
    expect(() => restartFactor(10, 1.5, 30)).toThrow(/restarts must be an integer >= 0, got 1.5/);
    expect(() => restartFactor(10, 1, Number.NaN)).toThrow(/restart delay .* got NaN/);
  });
});
