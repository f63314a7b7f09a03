import { describe, expect, it } from 'vitest';
import { evaluateFixed, evaluateMixed, jobCost } from '../../src/core/evaluate.ts';
import type { Instance, PlanningClass } from '../../src/core/instance.ts';

const cls: PlanningClass = {
  name: 'a',
  ratePerHour: 2,
  weight: 1,
  rescaleSeconds: 30,
  epochs: [
    { workSeconds: 1000, widths: [1, 2, 4], speedups: [1, 2, 3.2] },
    { workSeconds: 2000, widths: [1, 2, 4], speedups: [1, 1.6, 3.2] },
    { workSeconds: 400, widths: [1, 2, 4], speedups: [1, 2, 4] },
  ],
};

describe('Lemma 4.8 evaluator', () => {
  it('charges a rescale on the first epoch and on every width change', () => {
    // widths 2, 2, 4: T = (500 + 30) + 1250 + (100 + 30) = 1910; G = 2*530 + 2*1250 + 4*130 = 4080.
    expect(jobCost(cls, [2, 2, 4])).toEqual({ seconds: 1910, gpuSeconds: 4080 });
  });

  it('charges no rescale when the width holds', () => {
    // widths 4, 4, 4: T = 30 + 312.5 + 625 + 100 = 1067.5; G = 4 * 1067.5 = 4270.
    expect(jobCost(cls, [4, 4, 4])).toEqual({ seconds: 1067.5, gpuSeconds: 4270 });
  });

  it('aggregates rate-weighted JCT and budget in GPU-hours per hour', () => {
    const other: PlanningClass = {
      name: 'b',
      ratePerHour: 1,
      weight: 2,
      rescaleSeconds: 0,
      epochs: [{ workSeconds: 3600, widths: [1, 3], speedups: [1, 2] }],
    };
    const instance: Instance = { classes: [cls, other] };
    // Class a: T = 1910, G = 4080 at 2/h. Class b at width 3: T = 1800, G = 5400 at 1/h, weight 2.
    // JCT = (2*1*1910 + 1*2*1800) / (2*1 + 1*2) = 1855; budget = (2*4080 + 5400) / 3600 = 3.7667 GPUs.
    const value = evaluateFixed(instance, [[2, 2, 4], [3]]);
    expect(value.avgJctSeconds).toBeCloseTo(1855, 9);
    expect(value.gpuHoursPerHour).toBeCloseTo(13560 / 3600, 12);
  });

  it('averages a mixture by its shares', () => {
    const instance: Instance = { classes: [cls] };
    const mixed = evaluateMixed(instance, {
      a: [
        { share: 0.25, widths: [2, 2, 4] },
        { share: 0.75, widths: [4, 4, 4] },
      ],
    });
    expect(mixed.avgJctSeconds).toBeCloseTo(0.25 * 1910 + 0.75 * 1067.5, 9);
    expect(mixed.gpuHoursPerHour).toBeCloseTo((2 * (0.25 * 4080 + 0.75 * 4270)) / 3600, 12);
  });

  it('refuses widths the table does not list and shares that do not sum to 1', () => {
    expect(() => jobCost(cls, [3, 3, 3])).toThrow(/width 3 is not listed/);
    expect(() => evaluateMixed({ classes: [cls] }, { a: [{ share: 0.5, widths: [1, 1, 1] }] })).toThrow(
      /sum to 0.5/,
    );
  });
});
