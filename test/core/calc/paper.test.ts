import { describe, expect, it } from 'vitest';
import { solvePaper } from '../../../src/core/calc/paper.ts';
import { makeRelaxedItem, solveRelaxed } from '../../../src/core/calc/paper/relaxed.ts';
import type { Instance } from '../../../src/core/instance.ts';

/** One class, one epoch of an hour on 1 GPU at 1 job/hour: width k with speedup s costs k/s GPUs. */
function oneEpoch(widths: number[], speedups: number[]): Instance {
  return {
    classes: [
      {
        name: 'a',
        ratePerHour: 1,
        weight: 1,
        rescaleSeconds: 0,
        epochs: [{ workSeconds: 3600, widths, speedups }],
      },
    ],
  };
}

describe("the paper's Algorithm 1", () => {
  it('uses a linear start of the table: 2 GPUs at speedup 2 cost what 1 GPU costs', () => {
    // k/s: 1 at width 1, 1 at width 2, 4/3 at width 4. Budget 1.05 GPUs: width 2 fits (1 GPU on
    // average, 1800 s) and width 4 does not; the relaxed optimum lies on the hull segment 2-4 near
    // k = 2.2, which rounds to 2.
    const paper = solvePaper(oneEpoch([1, 2, 4], [1, 2, 3]), 1.05, { configurations: 1 });
    expect(paper?.plan.a).toEqual([{ share: 1, widths: [2] }]);
    expect(paper?.value.avgJctSeconds).toBeCloseTo(1800, 9);
  });

  it('rounds to a listed width on a hull edge', () => {
    // 1.13 at 2 GPUs lies on the edge from (1, 1) to (3, 1.26). At the budget of width 2 (2/1.13 GPUs)
    // the relaxed optimum is k = 2, a listed hull integer: rounding keeps it (2 fits; 1 is slower).
    const budget = 2 / 1.13;
    const paper = solvePaper(oneEpoch([1, 2, 3], [1, 1.13, 1.26]), budget, { configurations: 1 });
    expect(paper?.plan.a).toEqual([{ share: 1, widths: [2] }]);
    expect(paper?.value.avgJctSeconds).toBeCloseTo(3600 / 1.13, 6);
  });

  it('solves the relaxed problem along the hull when two vertices are equally GPU-efficient', () => {
    // Two items: one linear to 4 GPUs then flatter, one concave. Whatever the budget, the relaxed
    // optimum spends it and puts each item on its hull, never under it.
    const linear = makeRelaxedItem([1, 2, 4, 8], [1, 2, 4, 6], 1, 3600, 1);
    const concave = makeRelaxedItem([1, 2, 4], [1, 1.8, 3], 1, 3600, 1);
    // Budget 2.1: the linear item can take width 4 at cost 1, so its width must be at least 4.
    const { widths } = solveRelaxed([linear, concave], 2.1);
    expect(widths[0]).toBeGreaterThanOrEqual(4 - 1e-9);
    const spent = (k: number, s: number) => k / s;
    const hull = (k: number) => (k <= 4 ? k : 4 + ((k - 4) * 2) / 4);
    const hull2 = (k: number) => (k <= 2 ? 1 + 0.8 * (k - 1) : 1.8 + (k - 2) * 0.6);
    const w0 = widths[0] as number;
    const w1 = widths[1] as number;
    expect(spent(w0, hull(w0)) + spent(w1, hull2(w1))).toBeCloseTo(2.1, 6);
  });
});

describe("the paper's calculator near the minimum with rescale costs", () => {
  it('still answers with a plan where one exists (a linear start, s(2) = 2, rescale 60 s)', () => {
    const instance: Instance = {
      classes: [
        {
          name: 'a',
          ratePerHour: 1,
          weight: 1,
          rescaleSeconds: 60,
          epochs: [{ workSeconds: 3600, widths: [1, 2], speedups: [1, 2] }],
        },
      ],
    };
    // Width 1: the minimum feasible budget. Every rounding of the relaxed plan starts at width 2.
    for (const budget of [3660 / 3600, 1.02, 1.03]) {
      const solution = solvePaper(instance, budget);
      expect(solution).not.toBeNull();
      expect(solution!.value.gpuHoursPerHour).toBeLessThanOrEqual(budget * (1 + 1e-9));
    }
  });
});
