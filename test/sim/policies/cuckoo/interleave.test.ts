import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  estimateInterleaved,
  interleaveEfficiency,
  InterleaveError,
  isolatedIterationMs,
  type StageProfile,
} from '../../../../src/sim/policies/cuckoo/interleave.ts';

// CUCKOO Table 3 (ms): job 0 ResNet (order 0), job 1 BERT (order 1); BERT's loading stage comes first.
const resnet: StageProfile = { loadMs: 10, forwardMs: 37, backwardMs: 76, commMs: 98 };
const bert: StageProfile = { loadMs: 10, forwardMs: 72, backwardMs: 61, commMs: 363 };

describe('interleaving estimator (CUCKOO Algorithms 1-2)', () => {
  it("reproduces the paper's Table 4: stages 10, 72, 363, 98, 10, 72 and a 543 ms iteration", () => {
    const est = estimateInterleaved([bert, resnet], { gpu: 2, comm: 2 });
    expect(est.stagesMs.slice(0, 6)).toEqual([10, 72, 363, 98, 10, 72]);
    expect(est.iterationMs).toBe(543);
  });

  it('gives a job alone its load, forward and the longer of backward and communication', () => {
    expect(isolatedIterationMs(resnet)).toBe(10 + 37 + 98);
    expect(isolatedIterationMs(bert)).toBe(10 + 72 + 363);
    // Table 3's pair interleaved beats running them one after the other: (145 + 445) / 543.
    expect(interleaveEfficiency([bert, resnet], { gpu: 2, comm: 2 })).toBeCloseTo(590 / 543, 12);
  });

  it('two communication-bound jobs gain less than two compute/communication complements', () => {
    const commHeavy: StageProfile = { loadMs: 0, forwardMs: 10, backwardMs: 10, commMs: 200 };
    const gpuHeavy: StageProfile = { loadMs: 0, forwardMs: 100, backwardMs: 100, commMs: 5 };
    const complement = interleaveEfficiency([commHeavy, gpuHeavy]);
    const alike = interleaveEfficiency([commHeavy, commHeavy]);
    expect(complement).toBeGreaterThan(alike);
  });

  it('never runs a group faster than its slowest member alone, nor slower than all in sequence x interference', () => {
    const profile = fc.record({
      loadMs: fc.integer({ min: 0, max: 50 }),
      forwardMs: fc.integer({ min: 0, max: 400 }),
      backwardMs: fc.integer({ min: 0, max: 400 }),
      commMs: fc.integer({ min: 0, max: 400 }),
    });
    fc.assert(
      fc.property(fc.array(profile, { minLength: 1, maxLength: 3 }), (group) => {
        const est = estimateInterleaved(group, { gpu: 2, comm: 2 }).iterationMs;
        const alone = group.map(isolatedIterationMs);
        expect(est).toBeGreaterThanOrEqual(Math.max(...alone) - 1e-9);
        const serial = group.reduce((s, p) => s + p.loadMs + p.forwardMs + p.backwardMs + p.commMs, 0);
        expect(est).toBeLessThanOrEqual(2 * serial + 1e-9);
      }),
    );
  });

  it('refuses an empty group, negative stage times and coefficients below 1', () => {
    expect(() => estimateInterleaved([])).toThrow(InterleaveError);
    expect(() => estimateInterleaved([{ ...bert, commMs: -1 }])).toThrow(/commMs must be/);
    expect(() => estimateInterleaved([bert], { gpu: 0.5, comm: 1 })).toThrow(/>= 1/);
  });
});
