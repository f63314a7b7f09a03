import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileClass, solveChain } from '../../../src/core/calc/chain.ts';
import { jobCost } from '../../../src/core/evaluate.ts';
import { allWidthChoices, arbitraryInstance } from '../../helpers/random-instance.ts';

describe('chain dynamic programme', () => {
  it('matches brute force over every width sequence, rescales included', () => {
    fc.assert(
      fc.property(arbitraryInstance(1, 4), fc.double({ min: 0, max: 50, noNaN: true }), (instance, mu) => {
        const cls = instance.classes[0];
        if (!cls) return;
        const best = Math.min(
          ...allWidthChoices(cls).map((w) => {
            const c = jobCost(cls, w);
            return cls.weight * c.seconds + mu * c.gpuSeconds;
          }),
        );
        const dp = solveChain(compileClass(cls), cls.weight, mu);
        const check = jobCost(cls, dp.widths);
        // The DP's own totals are those of the widths it returns, and they are optimal.
        expect(dp.seconds).toBeCloseTo(check.seconds, 6);
        expect(dp.gpuSeconds).toBeCloseTo(check.gpuSeconds, 6);
        expect(cls.weight * dp.seconds + mu * dp.gpuSeconds).toBeLessThanOrEqual(best * (1 + 1e-9));
      }),
      { numRuns: 300 },
    );
  });

  it('finds the least GPU-time plan when time has no weight', () => {
    fc.assert(
      fc.property(arbitraryInstance(1, 4), (instance) => {
        const cls = instance.classes[0];
        if (!cls) return;
        const least = Math.min(...allWidthChoices(cls).map((w) => jobCost(cls, w).gpuSeconds));
        expect(solveChain(compileClass(cls), 0, 1).gpuSeconds).toBeLessThanOrEqual(least * (1 + 1e-9));
      }),
      { numRuns: 200 },
    );
  });

  it('holds a width across epochs when a rescale costs more than it saves', () => {
    const cls = {
      name: 'a',
      ratePerHour: 1,
      weight: 1,
      rescaleSeconds: 100,
      epochs: [
        { workSeconds: 400, widths: [1, 2], speedups: [1, 2] },
        { workSeconds: 100, widths: [1, 2], speedups: [1, 1.1] },
      ],
    };
    // Minimising time: 2,2 takes 100+200+90.9 = 390.9 s; 2,1 would take 100+200+100+100 = 500 s.
    expect(solveChain(compileClass(cls), 1, 0).widths).toEqual([2, 2]);
  });
});
