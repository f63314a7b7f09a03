import { describe, expect, it } from 'vitest';
import type { StageProfile } from '../../../../src/sim/policies/cuckoo/interleave.ts';
import {
  deadlineValue,
  estimatePair,
  EFFICIENCY_WEIGHT,
  type PackCandidate,
  packJobs,
  type PackOptions,
  sharedSeconds,
  unpackToFill,
} from '../../../../src/sim/policies/cuckoo/packing.ts';

// Two stage shapes on one GPU type: in our estimator a mixed pair interleaves best (1.43, the
// communication-heavy job first), two GPU-heavy jobs next (1.35), two communication-heavy least (1.10),
// at interference 1.2.
const gpuHeavy: StageProfile = { loadMs: 5, forwardMs: 60, backwardMs: 100, commMs: 60 };
const commHeavy: StageProfile = { loadMs: 5, forwardMs: 30, backwardMs: 40, commMs: 150 };
const job = (stages: StageProfile, deadlineIn: number, width = 1, secondsAlone = 100): PackCandidate => ({
  width,
  stages: [stages],
  secondsAlone: [secondsAlone],
  deadlineIn,
});
const cuckoo: PackOptions = {
  efficiencyWeight: EFFICIENCY_WEIGHT,
  deadlineFallback: true,
  interference: { gpu: 1.2, comm: 1.2 },
};
const muri: PackOptions = { ...cuckoo, efficiencyWeight: 1, deadlineFallback: false };
const pairsOf = (pairs: { a: number; b: number }[]) => pairs.map((p) => `${p.a}-${p.b}`).sort();

describe('job packing (CUCKOO Algorithm 3, Eq. 11-12)', () => {
  it('Eq. 11: 1 for equal deadlines, the ratio of time left otherwise, 0 against no deadline', () => {
    expect(deadlineValue(100, 100)).toBe(1);
    expect(deadlineValue(100, 400)).toBe(0.25);
    expect(deadlineValue(100, Number.POSITIVE_INFINITY)).toBe(0);
    expect(deadlineValue(Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY)).toBe(1);
    expect(deadlineValue(-5, 100)).toBe(0);
  });

  it("the paper's Fig. 3: efficiency alone pairs early with late deadlines, Eq. 12 pairs alike deadlines", () => {
    // A and B (GPU-heavy) due soon, C and D (communication-heavy) late; mixed pairs interleave best.
    const jobs = [job(gpuHeavy, 1000), job(gpuHeavy, 1000), job(commHeavy, 100_000), job(commHeavy, 100_000)];
    const byEfficiency = packJobs(jobs, muri);
    expect(byEfficiency).toHaveLength(2);
    for (const p of byEfficiency) expect([p.a < 2, p.b < 2]).toEqual([true, false]);
    expect(pairsOf(packJobs(jobs, cuckoo))).toEqual(['0-1', '2-3']);
  });

  it('falls back to running alone: different widths, no gain from interleaving, or a deadline lost by sharing', () => {
    expect(packJobs([job(gpuHeavy, 1000, 1), job(gpuHeavy, 1000, 2)], cuckoo)).toEqual([]);
    const heavy = { ...cuckoo, interference: { gpu: 3, comm: 3 } };
    expect(packJobs([job(gpuHeavy, 1000), job(gpuHeavy, 1000)], heavy)).toEqual([]);
    // 100 s alone meets a 120 s deadline; sharing slows it past it.
    const pair = estimatePair(job(gpuHeavy, 120), job(gpuHeavy, 120), cuckoo.interference);
    const [shared] = sharedSeconds(job(gpuHeavy, 120), job(gpuHeavy, 120), pair);
    expect(shared).toBeGreaterThan(120);
    expect(packJobs([job(gpuHeavy, 120), job(gpuHeavy, 10_000)], cuckoo)).toEqual([]);
    expect(packJobs([job(gpuHeavy, 120), job(gpuHeavy, 10_000)], muri)).toHaveLength(1);
    // A deadline already out of reach alone is no reason not to share.
    expect(packJobs([job(gpuHeavy, 50), job(gpuHeavy, 10_000)], cuckoo)).toHaveLength(1);
  });

  it('anti-overpacking: splits the least efficient pairs while weighted free GPUs exceed the demand', () => {
    // Widths force the pairs: GPU-heavy at 1 GPU (1.35), communication-heavy at 2 (1.10); demand 3.
    const jobs = [job(gpuHeavy, 1e4), job(gpuHeavy, 1e4), job(commHeavy, 1e4, 2), job(commHeavy, 1e4, 2)];
    const pairs = packJobs(jobs, muri);
    expect(pairsOf(pairs)).toEqual(['0-1', '2-3']);
    // Capacity 1 or 3 plain GPUs: keep both pairs. Two fast (weight 2) and one slow GPU: capacity 5,
    // split the less efficient pair (demand 5). Weight 3: capacity 7, split both.
    expect(unpackToFill(pairs, jobs, [1], [1])).toHaveLength(2);
    expect(unpackToFill(pairs, jobs, [2, 1], [1, 1])).toHaveLength(2);
    expect(pairsOf(unpackToFill(pairs, jobs, [2, 1], [2, 1]))).toEqual(['0-1']);
    expect(unpackToFill(pairs, jobs, [2, 1], [3, 1])).toEqual([]);
  });
});
