import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type CostedOption, minimiseCost, planWidths } from '../../../../src/sim/policies/pollux/optimize.ts';
import { buildJobCurve, GoodputTable } from '../../../../src/sim/policies/pollux/speedup.ts';
import { fakeOracle, flat, jobView, linear } from './fakes.ts';

/** Every combination of one option (or idle) per job: the reference the DP must match. */
function bruteForce(jobs: CostedOption[][], budget: number, idle?: number[]): number {
  let best = Number.POSITIVE_INFINITY;
  const walk = (j: number, used: number, cost: number) => {
    if (used > budget) return;
    if (j === jobs.length) {
      best = Math.min(best, cost);
      return;
    }
    if (idle !== undefined) walk(j + 1, used, cost + (idle[j] as number));
    for (const o of jobs[j] as CostedOption[]) walk(j + 1, used + o.width, cost + o.cost);
  };
  walk(0, 0, 0);
  return best;
}

const option = fc.record({
  width: fc.integer({ min: 1, max: 6 }),
  cost: fc.double({ min: 0, max: 10, noNaN: true }),
});
const instance = fc.record({
  jobs: fc.array(fc.array(option, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 4 }),
  budget: fc.integer({ min: 0, max: 14 }),
  idle: fc.boolean(),
});

describe('minimiseCost', () => {
  it('finds the least total cost within the GPU budget, as exhaustive search does', () => {
    fc.assert(
      fc.property(instance, ({ jobs, budget, idle }) => {
        const idleCosts = idle ? jobs.map(() => 20) : undefined;
        const reference = bruteForce(jobs, budget, idleCosts);
        if (!Number.isFinite(reference)) {
          expect(() => minimiseCost(jobs, budget, idleCosts)).toThrow(/do not fit in \d+ GPUs/);
          return;
        }
        const result = minimiseCost(jobs, budget, idleCosts);
        expect(result.totalCost).toBeCloseTo(reference, 9);
        // The choices are the ones costed, and within budget.
        let used = 0;
        let cost = 0;
        result.choices.forEach((c, j) => {
          if (c < 0) cost += idleCosts?.[j] ?? Number.NaN;
          else {
            used += jobs[j]![c]!.width;
            cost += jobs[j]![c]!.cost;
          }
        });
        expect(used).toBeLessThanOrEqual(budget);
        expect(cost).toBeCloseTo(result.totalCost, 9);
      }),
      { numRuns: 300 },
    );
  });

  it('prefers the narrower option on a tie', () => {
    const result = minimiseCost(
      [
        [
          { width: 1, cost: 1 },
          { width: 3, cost: 1 },
        ],
      ],
      4,
    );
    expect(result.choices).toEqual([0]);
  });

  it('names a bad budget', () => {
    expect(() => minimiseCost([], -1)).toThrow(/budget must be an integer >= 0, got -1/);
    expect(() => minimiseCost([[]], 2, [1, 2])).toThrow(/1 jobs but 2 idle costs/);
  });
});

describe('planWidths', () => {
  const curvesFor = (byJob: Parameters<typeof fakeOracle>[0], ids: number[], maxWidth = 16) => {
    const table = new GoodputTable(fakeOracle(byJob), 4);
    return ids.map((id) => buildJobCurve(jobView(id), table, maxWidth, 1));
  };

  it('gives the spare GPUs to the job that scales (known answer)', () => {
    // Linear job and flat job on 4 GPUs, fair goodputs 2 and 1: 3 + 1 beats 2 + 2 and 1 + 3.
    const plan = planWidths(curvesFor({ 1: linear, 2: flat }, [1, 2]), [2, 1], 4);
    expect(plan.chosen.map((o) => o?.width)).toEqual([3, 1]);
  });

  it('gives every job a GPU when there are enough, and never more GPUs than there are', () => {
    const curves = curvesFor({}, [1, 2, 3, 4, 5]);
    for (const gpus of [5, 6, 9, 17]) {
      const plan = planWidths(curves, [1, 1, 1, 1, 1], gpus);
      expect(plan.chosen.every((o) => o !== null && o.width >= 1)).toBe(true);
      expect(plan.chosen.reduce((s, o) => s + (o?.width ?? 0), 0)).toBeLessThanOrEqual(gpus);
    }
  });

  it('lets jobs wait only when there are more jobs than GPUs', () => {
    const plan = planWidths(curvesFor({}, [1, 2, 3]), [1, 1, 1], 2);
    expect(plan.chosen.filter((o) => o === null)).toHaveLength(1);
    expect(plan.chosen.reduce((s, o) => s + (o?.width ?? 0), 0)).toBe(2);
  });
});
