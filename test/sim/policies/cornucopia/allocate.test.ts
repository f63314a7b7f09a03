import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { HullPoint } from '../../../../src/core/hull.ts';
import {
  allocateWidths,
  type Candidate,
  nextStep,
} from '../../../../src/sim/policies/cornucopia/allocate.ts';
import type { QueueLevel } from '../../../../src/sim/policies/cornucopia/queues.ts';

const curve = (...points: [number, number][]): HullPoint[] =>
  points.map(([width, speedup]) => ({ width, speedup }));
const LINEAR4 = curve([1, 1], [2, 2], [3, 3], [4, 4]);
const LINEAR8 = curve([1, 1], [2, 2], [3, 3], [4, 4], [8, 8]);
const job = (id: number, queue: QueueLevel, vertices: HullPoint[], current = 0): Candidate => ({
  id,
  queue,
  vertices,
  current,
});
const asObject = (widths: Map<number, number>) => Object.fromEntries(widths);

describe('nextStep', () => {
  it('rates the step to the next hull vertex per GPU (by hand)', () => {
    const vertices = curve([1, 1], [2, 1.8], [4, 3]);
    expect(nextStep(vertices, 1)).toEqual({ width: 2, ratio: 1.8 });
    // 2 -> 4: (3 / 1.8)^(1/2) = 1.291.
    expect(nextStep(vertices, 2)?.ratio).toBeCloseTo(Math.sqrt(3 / 1.8), 12);
    // From 3 GPUs, off a vertex (a width kept from an earlier epoch), the hull reads 2.4: 3 / 2.4 = 1.25.
    expect(nextStep(vertices, 3)).toEqual({ width: 4, ratio: expect.closeTo(1.25, 12) });
    expect(nextStep(vertices, 4)).toBeNull();
  });
});

describe('allocateWidths', () => {
  it('admits one GPU per job in priority order while GPUs last', () => {
    const jobs = [job(1, 0, LINEAR4), job(2, 0, LINEAR4), job(3, 1, LINEAR4), job(4, 2, LINEAR4)];
    expect(asObject(allocateWidths(jobs, 3))).toEqual({ 1: 1, 2: 1, 3: 1 });
  });

  it('grows higher queues first, even when a lower-queue job would gain more', () => {
    // 5 GPUs: one each, then the Q0 job takes its 2nd, 3rd and 4th GPU (ratios 2, 1.5, 1.33) although
    // the Q1 job's 2nd GPU would double its speed.
    const jobs = [job(1, 0, LINEAR4), job(2, 1, curve([1, 1], [2, 2]))];
    expect(asObject(allocateWidths(jobs, 5))).toEqual({ 1: 4, 2: 1 });
  });

  it('within a queue, gives the next GPU to the highest acceleration ratio', () => {
    const jobs = [job(1, 1, curve([1, 1], [2, 1.2])), job(2, 1, curve([1, 1], [2, 1.9]))];
    expect(asObject(allocateWidths(jobs, 3))).toEqual({ 1: 1, 2: 2 });
  });

  it('gives a higher queue priority only for GPUs worth 10% speed or more; the rest are leftovers', () => {
    const jobs = [job(1, 0, curve([1, 1], [2, 1.05])), job(2, 1, curve([1, 1], [2, 1.5]))];
    expect(asObject(allocateWidths(jobs, 3))).toEqual({ 1: 1, 2: 2 });
    expect(asObject(allocateWidths(jobs, 4))).toEqual({ 1: 2, 2: 2 });
    // A job past its last vertex (no gain) gets nothing more, and GPUs stay idle.
    expect(asObject(allocateWidths([job(3, 0, curve([1, 1]))], 4))).toEqual({ 3: 1 });
  });

  it('shrinks a lower-queue job for a higher-queue one rather than stopping it (partial preemption)', () => {
    // The Q2 job holds all 8 GPUs; a Q0 job arrives and grows to 4; the Q2 job keeps 4.
    const jobs = [job(2, 0, LINEAR4), job(1, 2, LINEAR8, 8)];
    expect(asObject(allocateWidths(jobs, 8))).toEqual({ 2: 4, 1: 4 });
    // It stops only when the higher queues need every GPU just to run.
    const crowd = [job(2, 0, LINEAR4), job(3, 0, LINEAR4), job(1, 2, LINEAR8, 8)];
    expect(asObject(allocateWidths(crowd, 2))).toEqual({ 2: 1, 3: 1 });
  });

  it('lets a running job keep its width before leftovers are dealt (hysteresis)', () => {
    // Job 1 runs on 4 GPUs that add little (1.2 in all, 6% per GPU); job 2's 2nd GPU would add 8%.
    const slow = curve([1, 1], [4, 1.2]);
    const jobs = [job(1, 1, slow, 4), job(2, 1, curve([1, 1], [2, 1.08]))];
    expect(asObject(allocateWidths(jobs, 5))).toEqual({ 1: 4, 2: 1 });
    // Had job 1 been waiting, the leftover GPU would go to job 2.
    const waiting = [job(1, 1, slow), job(2, 1, curve([1, 1], [2, 1.08]))];
    expect(asObject(allocateWidths(waiting, 5))).toEqual({ 1: 1, 2: 2 });
    // GPUs past the job's last vertex (its new epoch gains nothing there) are not kept.
    expect(asObject(allocateWidths([job(1, 1, curve([1, 1], [2, 2]), 8)], 8))).toEqual({ 1: 2 });
  });

  it('never gives out more GPUs than exist or than a job can use, nor starves a higher queue', () => {
    const vertices = fc
      .array(fc.tuple(fc.integer({ min: 1, max: 4 }), fc.double({ min: 0, max: 1, noNaN: true })), {
        maxLength: 4,
      })
      .map((steps) => {
        const points: HullPoint[] = [{ width: 1, speedup: 1 }];
        for (const [gpus, gain] of steps) {
          const last = points[points.length - 1] as HullPoint;
          points.push({ width: last.width + gpus, speedup: last.speedup * (1 + gain) });
        }
        return points;
      });
    const candidate = fc.record({
      queue: fc.constantFrom<QueueLevel>(0, 1, 2),
      vertices,
      current: fc.nat(12),
    });
    fc.assert(
      fc.property(fc.array(candidate, { maxLength: 8 }), fc.nat(24), (raw, gpus) => {
        const jobs = raw.map((c, id) => ({ ...c, id })).sort((a, b) => a.queue - b.queue || a.id - b.id);
        const widths = allocateWidths(jobs, gpus);
        const total = [...widths.values()].reduce((s, w) => s + w, 0);
        expect(total).toBeLessThanOrEqual(gpus);
        for (const w of widths.values()) expect(w).toBeGreaterThanOrEqual(1);
        const waitingQueues = jobs.filter((j) => !widths.has(j.id)).map((j) => j.queue);
        const runningQueues = jobs.filter((j) => widths.has(j.id)).map((j) => j.queue);
        if (waitingQueues.length > 0 && runningQueues.length > 0) {
          expect(Math.max(...runningQueues)).toBeLessThanOrEqual(Math.min(...waitingQueues));
        }
        for (const j of jobs) {
          const last = (j.vertices[j.vertices.length - 1] as HullPoint).width;
          expect(widths.get(j.id) ?? 0).toBeLessThanOrEqual(last);
        }
      }),
      { numRuns: 300 },
    );
  });
});
