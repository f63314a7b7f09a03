import { describe, expect, it } from 'vitest';
import { WARMUP_FLOOR, warmupFactor, warmupOptions } from '../../src/core/warmup.ts';

describe('warm-up', () => {
  it('plans with the floor at the start, rising linearly to the whole budget at the end', () => {
    const warmup = warmupOptions(8);
    expect(warmupFactor(0, warmup)).toBe(WARMUP_FLOOR);
    expect(warmupFactor(2, warmup)).toBeCloseTo(0.625, 12);
    expect(warmupFactor(4, warmup)).toBeCloseTo(0.75, 12);
    expect(warmupFactor(8, warmup)).toBe(1);
    expect(warmupFactor(30, warmup)).toBe(1);
  });

  it('is the whole budget without one, and before the start reads as the start', () => {
    expect(warmupOptions(0)).toBeNull();
    expect(warmupFactor(0, null)).toBe(1);
    expect(warmupFactor(-1, warmupOptions(8))).toBe(WARMUP_FLOOR);
  });

  it('refuses hours that are not a number >= 0, naming what is allowed', () => {
    expect(() => warmupOptions(-1)).toThrow(/warm-up hours must be a number >= 0 \(0: none\), got -1/);
    expect(() => warmupOptions(Number.NaN)).toThrow(/got NaN/);
  });
});
