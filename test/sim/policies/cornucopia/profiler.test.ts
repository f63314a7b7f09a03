import { describe, expect, it } from 'vitest';
import {
  growthFactor,
  lastGpuFactor,
  measuredSpeedup,
  rampUpProfile,
  scalingFactors,
} from '../../../../src/sim/policies/cornucopia/profiler.ts';

const epoch = (speedup: Record<string, number>) => ({ workSeconds: 100, speedup });

describe('rampUpProfile (Algorithm 1, section 4.3)', () => {
  it('measures every width from 1 GPU to twice the request, and no further', () => {
    const profile = rampUpProfile(epoch({ '1': 1, '2': 1.8, '4': 3, '8': 4 }), 3);
    expect(profile.maxWidth).toBe(6);
    // 3 GPUs is read between the listed 2 and 4; 5 and 6 between 4 and 8.
    expect(profile.throughput.slice(1)).toEqual([1, 1.8, 2.4, 3, 3.25, 3.5]);
    expect(profile.factor.length).toBe(6);
  });

  it('reads the table as measured, dips across node boundaries included, flat past the widest', () => {
    const dip = epoch({ '1': 1, '4': 2.6, '5': 1.9, '6': 2.2 });
    expect(measuredSpeedup(dip, 5)).toBe(1.9);
    expect(measuredSpeedup(dip, 2)).toBeCloseTo(1 + 1.6 / 3, 12);
    expect(measuredSpeedup(dip, 40)).toBe(2.2);
  });
});

describe('scalingFactors (Eq. 1)', () => {
  it('is 1 at one GPU and each further gain relative to the second GPU (by hand)', () => {
    // T = 1, 1.8, 2.4, 3, 3.2: gains 0.8, 0.6, 0.6, 0.2 -> S = 1, 0.75, 0.75, 0.25.
    const s = scalingFactors([0, 1, 1.8, 2.4, 3, 3.2]);
    expect(s.slice(1).map((x) => Number(x.toFixed(12)))).toEqual([1, 0.75, 0.75, 0.25]);
  });

  it('is 1 throughout for a linear job, and negative where throughput dips', () => {
    expect(scalingFactors([0, 1, 2, 3, 4]).slice(1)).toEqual([1, 1, 1]);
    expect(scalingFactors([0, 1, 2, 3, 2.5]).slice(1)).toEqual([1, 1, -0.5]);
  });

  it('is 0 throughout when the second GPU gains nothing (Eq. 1 undefined there)', () => {
    expect(scalingFactors([0, 1, 0.8, 1.2, 1.3]).slice(1)).toEqual([0, 0, 0]);
  });
});

describe('growthFactor and lastGpuFactor', () => {
  const profile = rampUpProfile(epoch({ '1': 1, '2': 1.8, '3': 2.4, '4': 3 }), 2);

  it('rates the next GPU by S at the current width: first GPUs first, none past twice the request', () => {
    expect(growthFactor(profile, 0)).toBe(Number.POSITIVE_INFINITY);
    expect(growthFactor(profile, 1)).toBe(1);
    expect(growthFactor(profile, 2)).toBeCloseTo(0.75, 12);
    expect(growthFactor(profile, 4)).toBe(Number.NEGATIVE_INFINITY);
  });

  it('rates the GPU a revocation would take by the S that GPU added; a job keeps its only GPU longest', () => {
    expect(lastGpuFactor(profile, 1)).toBe(Number.POSITIVE_INFINITY);
    expect(lastGpuFactor(profile, 2)).toBe(1);
    expect(lastGpuFactor(profile, 4)).toBeCloseTo(0.75, 12);
  });
});
