import { describe, expect, it } from 'vitest';
import { jctAtPaid, metricsAtPaid } from '../../src/sim/matched.ts';

const run = (paidGpuHoursPerHour: number, avgJctSeconds: number) => ({ paidGpuHoursPerHour, avgJctSeconds });

describe('jctAtPaid', () => {
  it('interpolates between the nearest runs below and above, whatever their order', () => {
    const runs = [run(44, 1000), run(36, 2000), run(30, 3000), run(38, 1800), run(41, 1500)];
    // Bracketed by 38 (1800 s) and 41 (1500 s): 1800 - (2/3) x 300.
    expect(jctAtPaid(runs, 40)).toBeCloseTo(1600, 9);
    expect(jctAtPaid(runs, 36)).toBe(2000);
  });

  it('takes the runs nearest in paid usage even when the knob is not monotone in JCT', () => {
    const runs = [run(35, 1700), run(37.7, 1600), run(39.2, 1550), run(42.8, 1500), run(44.2, 1610)];
    expect(jctAtPaid(runs, 40)).toBeCloseTo(1550 - (0.8 / 3.6) * 50, 9);
  });

  it('does not extrapolate', () => {
    expect(jctAtPaid([run(30, 1), run(35, 2)], 40)).toBeNull();
    expect(jctAtPaid([run(45, 1)], 40)).toBeNull();
    expect(jctAtPaid([], 40)).toBeNull();
  });

  it('averages runs that pay the same', () => {
    expect(jctAtPaid([run(40, 100), run(40, 300)], 40)).toBe(200);
  });

  it('reads the end runs at the ends of the range, and nothing just past them', () => {
    const runs = [run(8, 400), run(2, 1000), run(4, 600)];
    expect(jctAtPaid(runs, 2)).toBe(1000);
    expect(jctAtPaid(runs, 8)).toBe(400);
    expect(jctAtPaid(runs, 1.999)).toBeNull();
    expect(jctAtPaid(runs, 8.001)).toBeNull();
  });

  it('takes runs that pay the same as one point, their average, also as a bracket and in any order', () => {
    // At 30: (100 + 300) / 2 = 200; at 35, halfway to 40 (500 s): 200 + 0.5 x (500 - 200) = 350, not the
    // 300 or 400 of whichever tied run came first.
    const tied = [run(30, 100), run(30, 300), run(40, 500)];
    expect(jctAtPaid(tied, 35)).toBeCloseTo(350, 9);
    expect(jctAtPaid([tied[1]!, tied[0]!, tied[2]!], 35)).toBe(jctAtPaid(tied, 35));
    expect(jctAtPaid([run(20, 700), ...tied], 25)).toBeCloseTo(450, 9);
  });
});

describe('metricsAtPaid', () => {
  const full = (paid: number, jct: number, queue: number) => ({
    paidGpuHoursPerHour: paid,
    avgJctSeconds: jct,
    p50JctSeconds: jct / 2,
    p95JctSeconds: jct * 2,
    p99JctSeconds: jct * 3,
    avgQueueSeconds: queue,
  });

  it('interpolates every metric between the same two runs', () => {
    const at = metricsAtPaid([full(30, 3000, 300), full(40, 2000, 100), full(50, 1000, 0)], 35);
    expect(at).toEqual({
      avgJctSeconds: 2500,
      p50JctSeconds: 1250,
      p95JctSeconds: 5000,
      p99JctSeconds: 7500,
      avgQueueSeconds: 200,
    });
  });

  it('is null where the runs do not bracket the paid usage', () => {
    expect(metricsAtPaid([full(30, 3000, 300)], 35)).toBeNull();
  });
});
