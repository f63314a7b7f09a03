import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { allocateWidths, type Contender } from '../../../../src/sim/policies/cornucopia/allocate.ts';
import { type RampUpProfile, scalingFactors } from '../../../../src/sim/policies/cornucopia/profiler.ts';
import type { QueueLevel } from '../../../../src/sim/policies/cornucopia/queues.ts';

/** A ramp-up profile from throughputs at 1, 2, ... GPUs (the width profiled to is their count). */
const profile = (...throughput: number[]): RampUpProfile => {
  const t = [0, ...throughput];
  return { throughput: t, factor: scalingFactors(t), maxWidth: throughput.length };
};
const linear = (maxWidth: number) => profile(...Array.from({ length: maxWidth }, (_, i) => i + 1));
const job = (id: number, queue: QueueLevel, request: number, p: RampUpProfile, current = 0): Contender => ({
  id,
  queue,
  request,
  profile: p,
  current,
});
const asObject = (widths: Map<number, number>) => Object.fromEntries(widths);

// The paper has no numeric worked example; these follow section 4.4's text and Algorithms 2 and 3 step
// by step, each on a case small enough to check by hand.
describe('Algorithm 2: greedy allocation of free GPUs (section 4.4)', () => {
  it('gives an interactive job its full request, or every free GPU when fewer are left', () => {
    // 6 GPUs: the first interactive job asks 4 and gets 4; the second asks 4 and gets the 2 left.
    const jobs = [job(1, 1, 4, linear(8)), job(2, 1, 4, linear(8))];
    expect(asObject(allocateWidths(jobs, 6))).toEqual({ 1: 4, 2: 2 });
    // An interactive job never gets more than it asked, even with GPUs to spare.
    expect(asObject(allocateWidths([job(1, 1, 2, linear(4))], 8))).toEqual({ 1: 2 });
  });

  it('gives batch GPUs one at a time to the highest scaling factor in the queue', () => {
    // Both hold 2 GPUs. A: T = 1, 2, 2.5, 2.75 (S^2 = 0.5, S^3 = 0.25); B: T = 1, 1.5, 2, 2.5, whose
    // every GPU adds what its 2nd did (S = 1 throughout: Eq. 1 rates a job against its own 2nd GPU).
    // The 2 free GPUs go to B.
    const a = job(1, 2, 2, profile(1, 2, 2.5, 2.75), 2);
    const b = job(2, 2, 2, profile(1, 1.5, 2, 2.5), 2);
    expect(asObject(allocateWidths([a, b], 6))).toEqual({ 1: 2, 2: 4 });
    // B is at its profiled 4; the next GPU goes to A.
    expect(asObject(allocateWidths([a, b], 7))).toEqual({ 1: 3, 2: 4 });
    // A waiting job's first GPU comes before any growth; then ties (S^1 = 1 for all) go to the earlier.
    expect(asObject(allocateWidths([job(1, 2, 2, linear(4)), job(2, 2, 2, linear(4))], 5))).toEqual({
      1: 4,
      2: 1,
    });
  });

  it('serves a lower queue only with what the higher one cannot use', () => {
    const jobs = [job(1, 2, 1, linear(2)), job(2, 3, 2, linear(4))];
    expect(asObject(allocateWidths(jobs, 4))).toEqual({ 1: 2, 2: 2 });
  });

  it('stops at twice the request (the profile) and at GPUs that add no throughput', () => {
    expect(asObject(allocateWidths([job(1, 2, 2, linear(4))], 16))).toEqual({ 1: 4 });
    // T dips at 3 GPUs (S^2 < 0): the greedy, one GPU at a time, stops at 2.
    expect(asObject(allocateWidths([job(1, 2, 2, profile(1, 1.6, 1.4, 2))], 16))).toEqual({ 1: 2 });
    // A job whose 2nd GPU gains nothing keeps 1.
    expect(asObject(allocateWidths([job(1, 2, 1, profile(1, 0.9))], 16))).toEqual({ 1: 1 });
  });

  it('keeps what running jobs hold and deals only the free GPUs', () => {
    // Job 1 holds 3 of 4 GPUs; the arriving batch job 2 gets the free one, not a fair share.
    const jobs = [job(1, 2, 2, linear(4), 3), job(2, 2, 2, linear(4))];
    expect(asObject(allocateWidths(jobs, 4))).toEqual({ 1: 3, 2: 1 });
  });
});

describe('Algorithm 3: scaling-aware partial preemption (section 4.4)', () => {
  it('takes GPUs for a higher-priority job from the lower job with the lowest scaling factor', () => {
    // 8 GPUs held by two Queue 2 jobs: L (linear, 4 GPUs) and B (sub-linear: T = 1, 2, 2.5, 2.75, so
    // its 3rd GPU rates S^2 = 0.5 and its 4th S^3 = 0.25). An interactive job asks 2: both come from B,
    // the sub-linear one, and B is shrunk, not stopped.
    const l = job(1, 2, 4, linear(8), 4);
    const b = job(2, 2, 4, profile(1, 2, 2.5, 2.75), 4);
    const interactive = job(3, 1, 2, linear(4));
    expect(asObject(allocateWidths([interactive, l, b], 8))).toEqual({ 3: 2, 1: 4, 2: 2 });
  });

  it('among linear jobs, takes from the one with the most GPUs', () => {
    const jobs = [job(3, 1, 3, linear(6)), job(1, 2, 4, linear(8), 2), job(2, 2, 6, linear(12), 6)];
    expect(asObject(allocateWidths(jobs, 8))).toEqual({ 3: 3, 1: 2, 2: 3 });
  });

  it('takes from Queue 3 before Queue 2, and shrinks every job before it stops one', () => {
    const jobs = [
      job(4, 1, 4, linear(8)),
      job(1, 2, 3, profile(1, 2, 2.2, 2.3), 3),
      job(2, 3, 2, linear(4), 3),
      job(3, 3, 1, linear(2), 2),
    ];
    // Queue 3 first: job 2 (3 GPUs) and job 3 (2) are shrunk to 1 each (3 GPUs), then the 4th GPU
    // stops one of them rather than touch Queue 2: on a full tie, the later job (3).
    expect(asObject(allocateWidths(jobs, 8))).toEqual({ 4: 4, 1: 3, 2: 1 });
  });

  it('never preempts Queue 1, nor jobs of the same queue', () => {
    const full = [job(1, 1, 4, linear(8), 4), job(2, 1, 4, linear(8))];
    expect(asObject(allocateWidths(full, 4))).toEqual({ 1: 4 });
    const batch = [job(1, 2, 4, linear(8), 4), job(2, 2, 4, linear(8))];
    expect(asObject(allocateWidths(batch, 4))).toEqual({ 1: 4 });
  });

  it('lets a batch job take up to its request from lower queues', () => {
    const jobs = [job(1, 2, 2, linear(4)), job(2, 3, 4, linear(8), 8)];
    expect(asObject(allocateWidths(jobs, 8))).toEqual({ 1: 2, 2: 6 });
  });
});

describe('allocateWidths, on random inputs', () => {
  it('never gives out more GPUs than exist, never shrinks Queue 1, and keeps jobs in their caps', () => {
    const contender = fc.record({
      queue: fc.constantFrom<QueueLevel>(1, 2, 3),
      request: fc.integer({ min: 1, max: 6 }),
      gains: fc.array(fc.double({ min: -0.5, max: 1.2, noNaN: true }), { minLength: 1, maxLength: 11 }),
      current: fc.nat(12),
    });
    fc.assert(
      fc.property(fc.array(contender, { maxLength: 8 }), fc.nat(24), (raw, gpus) => {
        let held = 0;
        const jobs = raw
          .map((c, id) => {
            const t = [1];
            for (const g of c.gains) t.push((t[t.length - 1] as number) + g);
            const p = profile(...t.slice(0, 2 * c.request));
            // What a job holds came from earlier rounds: within the cluster and its cap.
            const cap = c.queue === 1 ? c.request : p.maxWidth;
            const current = Math.min(c.current, cap, gpus - held);
            held += current;
            return job(id, c.queue, Math.min(c.request, Math.max(gpus, 1)), p, current);
          })
          .sort((a, b) => a.queue - b.queue || a.id - b.id);
        const widths = allocateWidths(jobs, gpus);
        const total = [...widths.values()].reduce((s, w) => s + w, 0);
        expect(total).toBeLessThanOrEqual(gpus);
        for (const j of jobs) {
          const w = widths.get(j.id) ?? 0;
          if (j.queue === 1) expect(w).toBeGreaterThanOrEqual(j.current);
          expect(w).toBeLessThanOrEqual(Math.max(j.profile.maxWidth, j.request));
        }
      }),
      { numRuns: 300 },
    );
  });
});
