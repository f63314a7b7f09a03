import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BudgetTooLowError } from '../../../src/core/calc/errors.ts';
import { solveExact } from '../../../src/core/calc/exact.ts';
import { computeFrontier, frontierValueAt } from '../../../src/core/calc/frontier.ts';
import { solvePaper } from '../../../src/core/calc/paper.ts';
import { evaluateFixed, evaluateMixed } from '../../../src/core/evaluate.ts';
import type { Instance } from '../../../src/core/instance.ts';
import { allWidthChoices, arbitraryInstance } from '../../helpers/random-instance.ts';

/** Every fixed plan of a small instance with its value. */
function everyPlan(instance: Instance) {
  let plans: number[][][] = [[]];
  for (const cls of instance.classes) {
    const choices = allWidthChoices(cls);
    plans = plans.flatMap((p) => choices.map((c) => [...p, c]));
  }
  return plans.map((plan) => ({ plan, value: evaluateFixed(instance, plan) }));
}

const budgetFactor = fc.double({ min: 1, max: 4, noNaN: true });

describe('exact calculator', () => {
  it('is never beaten by any fixed plan within budget, and spends at most the budget', () => {
    fc.assert(
      fc.property(arbitraryInstance(2, 3, 4), budgetFactor, (instance, factor) => {
        const plans = everyPlan(instance);
        const minimum = Math.min(...plans.map((p) => p.value.gpuHoursPerHour));
        const budget = minimum * factor;
        const exact = solveExact(instance, budget);
        expect(exact.minFeasibleBudget).toBeCloseTo(minimum, 9);
        expect(exact.value.gpuHoursPerHour).toBeLessThanOrEqual(budget * (1 + 1e-9));
        const bestFixed = Math.min(
          ...plans.filter((p) => p.value.gpuHoursPerHour <= budget).map((p) => p.value.avgJctSeconds),
        );
        expect(exact.value.avgJctSeconds).toBeLessThanOrEqual(bestFixed * (1 + 1e-9));
      }),
      { numRuns: 150 },
    );
  });

  it("is never worse than the paper's Algorithm 1, and a mixture spends exactly the budget", () => {
    fc.assert(
      fc.property(
        arbitraryInstance(3, 4),
        budgetFactor,
        fc.integer({ min: 1, max: 1000 }),
        (instance, factor, seed) => {
          const minimum = computeFrontier(instance).vertices[0]?.value.gpuHoursPerHour as number;
          const budget = minimum * factor;
          const exact = solveExact(instance, budget);
          const paper = solvePaper(instance, budget, { seed, configurations: 10 });
          if (paper) {
            expect(paper.value.gpuHoursPerHour).toBeLessThanOrEqual(budget * (1 + 1e-9));
            expect(exact.value.avgJctSeconds).toBeLessThanOrEqual(paper.value.avgJctSeconds * (1 + 1e-9));
          }
          const mixed = Object.values(exact.plan).some((shares) => shares.length > 1);
          if (mixed) expect(exact.value.gpuHoursPerHour).toBeCloseTo(budget, 6);
          // The reported value is the evaluator's value of the returned plan.
          const again = evaluateMixed(instance, exact.plan);
          expect(again.avgJctSeconds).toBeCloseTo(exact.value.avgJctSeconds, 6);
          for (const shares of Object.values(exact.plan)) {
            expect(shares.reduce((s, x) => s + x.share, 0)).toBeCloseTo(1, 12);
            for (const s of shares) expect(s.share).toBeGreaterThan(0);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('agrees with the frontier at every budget', () => {
    fc.assert(
      fc.property(arbitraryInstance(3, 4), budgetFactor, (instance, factor) => {
        const frontier = computeFrontier(instance);
        const budget = (frontier.vertices[0]?.value.gpuHoursPerHour as number) * factor;
        const onHull = frontierValueAt(frontier, budget);
        expect(onHull).toBeDefined();
        expect(solveExact(instance, budget).value.avgJctSeconds).toBeCloseTo(
          onHull?.avgJctSeconds as number,
          6,
        );
      }),
      { numRuns: 150 },
    );
  });

  it('lists frontier vertices in increasing budget and decreasing JCT, convex', () => {
    fc.assert(
      fc.property(arbitraryInstance(3, 4), (instance) => {
        const v = computeFrontier(instance).vertices.map((x) => x.value);
        for (let i = 1; i < v.length; i++) {
          const a = v[i - 1] as (typeof v)[number];
          const b = v[i] as (typeof v)[number];
          expect(b.gpuHoursPerHour).toBeGreaterThan(a.gpuHoursPerHour);
          expect(b.avgJctSeconds).toBeLessThan(a.avgJctSeconds);
          if (i >= 2) {
            const z = v[i - 2] as (typeof v)[number];
            const slopeBefore = (a.avgJctSeconds - z.avgJctSeconds) / (a.gpuHoursPerHour - z.gpuHoursPerHour);
            const slopeAfter = (b.avgJctSeconds - a.avgJctSeconds) / (b.gpuHoursPerHour - a.gpuHoursPerHour);
            expect(slopeAfter).toBeGreaterThanOrEqual(slopeBefore - 1e-6 * Math.abs(slopeBefore));
          }
        }
      }),
      { numRuns: 150 },
    );
  });

  it("gives a width under an epoch's hull (a dip) where holding it saves a rescale (docs/api.md)", () => {
    const instance: Instance = {
      classes: [
        {
          name: 'a',
          ratePerHour: 1,
          weight: 1,
          rescaleSeconds: 600,
          epochs: [
            // 4 GPUs dip below 2 here...
            { workSeconds: 360, widths: [1, 2, 4], speedups: [1, 1.8, 1.5] },
            // ...and pay off here.
            { workSeconds: 36_000, widths: [1, 2, 4], speedups: [1, 1.8, 3.6] },
          ],
        },
      ],
    };
    // Fastest: 4, 4 takes 600 + 360/1.5 + 36000/3.6 = 10840 s; 2, 4 takes 600 + 200 + 600 + 10000 = 11400 s.
    const fastest = solveExact(instance, 1000);
    expect(fastest.plan.a).toEqual([{ share: 1, widths: [4, 4] }]);
    expect(fastest.value.avgJctSeconds).toBeCloseTo(10_840, 9);
  });

  it('refuses a budget below the minimum and states the minimum', () => {
    const instance: Instance = {
      classes: [
        {
          name: 'a',
          ratePerHour: 3600,
          weight: 1,
          rescaleSeconds: 0,
          epochs: [{ workSeconds: 2, widths: [1, 2], speedups: [1, 1.5] }],
        },
      ],
    };
    // Cheapest: width 1 for 2 s at 3600 jobs/hour = 2 GPUs on average.
    expect(() => solveExact(instance, 1.5)).toThrow(BudgetTooLowError);
    expect(() => solveExact(instance, 1.5)).toThrow(/minimum feasible budget 2\.00000/);
    // Between the two plans (2 and 2*1.333 = 2.667 GPUs) the exact plan mixes them.
    const mixed = solveExact(instance, 2.4);
    expect(mixed.plan.a).toEqual([
      { share: expect.closeTo(0.6, 9), widths: [2] },
      { share: expect.closeTo(0.4, 9), widths: [1] },
    ]);
    expect(mixed.value.gpuHoursPerHour).toBeCloseTo(2.4, 9);
  });
});
