import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AppSpec } from '../../../src/sim/truth/apps.ts';
import { bestBatchConfig, statisticalGain, timePerStep } from '../../../src/sim/truth/goodput.ts';
import { tablesFromCsv } from '../../../src/sim/truth/load.ts';
import { createJobTruth } from '../../../src/sim/truth/model.ts';

const SPEC: AppSpec = {
  name: 'tiny',
  initBatch: 4,
  maxBatch: 16,
  minLocalBsz: 2,
  maxLocalBsz: 4,
  dataEpochs: 1,
};

const PLACEMENTS = `placement,local_bsz,step_time,sync_time
1,2,1.0,0.0
1,4,1.2,0.0
11,2,1.5,0.5
11,4,1.7,0.5
`;

function tiny(validation4: string, validation16: string) {
  const header = 'progress,iteration,metric,grad_sqr,grad_var\n';
  const validation = new Map([
    [4, header + validation4],
    [16, header + validation16],
  ]);
  return createJobTruth(tablesFromCsv(PLACEMENTS, undefined, validation), SPEC);
}

describe('gain and step time', () => {
  it('follow the README formulas', () => {
    // var 3, sqr 1, B/B0 = 2: (3 + 1) / (3/2 + 1) = 1.6
    expect(statisticalGain({ sqr: 1, var: 3 }, 8, 4)).toBeCloseTo(1.6, 12);
    expect(statisticalGain({ sqr: 1, var: 3 }, 4, 4)).toBe(1);
    // Pure noise gains the full batch ratio; pure signal gains nothing.
    expect(statisticalGain({ sqr: 0, var: 5 }, 32, 4)).toBeCloseTo(8, 12);
    expect(statisticalGain({ sqr: 2, var: 0 }, 32, 4)).toBe(1);
    expect(timePerStep({ stepTime: 1.5, syncTime: 0.5 }, 3)).toBe(4.5);
  });
});

describe('best batch configuration on a tiny hand-computed table', () => {
  it('picks the hand-computed optimum on two nodes', () => {
    const truth = tiny('10,10,0,1,3\n', '9,3,0,1,5\n');
    expect(truth.epochEnds).toEqual([9]);
    // At B = 8: var = 3 + (8-4)/(16-4) * 2 = 11/3, gain = (14/3) / (11/6 + 1) = 28/17; time at atomic 4 = 1.7.
    // Every other candidate is lower (e.g. atomic 4 with one accumulation step: B = 16, gain 8/3 over 2.9 s).
    const best = truth.bestConfigInEpoch([1, 1], 0);
    expect(best).toMatchObject({ atomicBsz: 4, accum: 0, totalBatch: 8 });
    expect(best?.gain).toBeCloseTo(28 / 17, 12);
    expect(best?.timePerStep).toBeCloseTo(1.7, 12);
    expect(best?.goodput).toBeCloseTo(28 / 17 / 1.7, 12);
    // The same placement in another rotation, and through the progress-based entry point.
    expect(truth.bestConfig([1, 1], 3)).toEqual(best);
    // On one GPU accumulation costs a full step and noise is low: B0 at atomic 4 wins, goodput 1 / 1.2.
    expect(truth.bestConfigInEpoch([1], 0)).toMatchObject({ atomicBsz: 4, accum: 0, totalBatch: 4 });
  });

  it('accumulates when gradient noise is high and the all-reduce is costly', () => {
    const truth = tiny('10,10,0,1,100\n', '9,3,0,1,100\n');
    // 2 GPUs, atomic 4, 1 extra step: B = 16, gain = 101 / 26, time = 1.7 + 1.2 = 2.9
    // beats B = 8 without accumulation: gain 101 / 51 over 1.7 s.
    const best = truth.bestConfigInEpoch([1, 1], 0);
    expect(best).toMatchObject({ atomicBsz: 4, accum: 1, totalBatch: 16 });
    expect(best?.goodput).toBeCloseTo(101 / 26 / 2.9, 12);
  });

  it('has no configuration when even the smallest per-GPU batch exceeds the max batch', () => {
    const truth = tiny('10,10,0,1,3\n', '9,3,0,1,5\n');
    expect(truth.bestConfigInEpoch([4, 4, 1], 0)).toBeUndefined();
  });
});

describe('batch choice respects the bounds', () => {
  const boundsArb = fc
    .record({
      initBatch: fc.integer({ min: 1, max: 64 }),
      factor: fc.integer({ min: 1, max: 64 }),
      minLocalBsz: fc.integer({ min: 1, max: 32 }),
      localSpan: fc.integer({ min: 0, max: 64 }),
      replicas: fc.integer({ min: 1, max: 16 }),
      alpha: fc.double({ min: 0.001, max: 1, noNaN: true }),
      beta: fc.double({ min: 0.001, max: 1, noNaN: true }),
      syncShare: fc.double({ min: 0, max: 0.9, noNaN: true }),
      noise: fc.double({ min: 0, max: 100, noNaN: true }),
      probes: fc.array(fc.tuple(fc.nat(), fc.nat()), { minLength: 1, maxLength: 20 }),
    })
    .map((r) => ({ ...r, maxBatch: r.initBatch * r.factor, maxLocalBsz: r.minLocalBsz + r.localSpan }));

  it('stays within every bound and is not beaten by any other feasible configuration', () => {
    fc.assert(
      fc.property(boundsArb, (b) => {
        const times = (a: number) => ({ stepTime: b.beta + b.alpha * a, syncTime: b.syncShare * b.beta });
        const stats = (batch: number) => ({ sqr: 1, var: b.noise * (1 + batch / b.maxBatch) });
        const best = bestBatchConfig(b, b.replicas, times, stats);
        const feasible = (a: number, c: number) =>
          a >= b.minLocalBsz &&
          a <= b.maxLocalBsz &&
          b.replicas * a * (c + 1) >= b.initBatch &&
          b.replicas * a * (c + 1) <= b.maxBatch;
        if (best === undefined) {
          // Nothing fits: no per-GPU batch and accumulation count lands within [initBatch, maxBatch].
          for (let a = b.minLocalBsz; a <= b.maxLocalBsz; a++) {
            for (let c = 0; b.replicas * a * (c + 1) <= b.maxBatch; c++) expect(feasible(a, c)).toBe(false);
          }
          return;
        }
        expect(feasible(best.atomicBsz, best.accum)).toBe(true);
        expect(best.totalBatch).toBe(b.replicas * best.atomicBsz * (best.accum + 1));
        for (const [pa, pc] of b.probes) {
          const a = b.minLocalBsz + (pa % (b.localSpan + 1));
          const c = pc % 64;
          if (!feasible(a, c)) continue;
          const batch = b.replicas * a * (c + 1);
          const goodput = statisticalGain(stats(batch), batch, b.initBatch) / timePerStep(times(a), c);
          expect(goodput).toBeLessThanOrEqual(best.goodput * (1 + 1e-12));
        }
      }),
      { numRuns: 300 },
    );
  });
});
