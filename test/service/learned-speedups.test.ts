/**
 * A class's speedups learned from the widths its jobs ran at (src/service/learned-speedups.ts), from
 * hand-built samples: each is an epoch's duration x the table's speedup at its width.
 */
import { describe, expect, it } from 'vitest';
import { learnEpoch } from '../../src/service/learned-speedups.ts';
import { onInstanceType, trimSamples, type WorkSample } from '../../src/service/work-samples.ts';

const T4 = 'g4dn.12xlarge';
const epoch = { workSeconds: 3600, speedup: { '1': 1, '2': 1.9, '4': 3.6, '8': 7.5, '16': 12 } };

/** `n` samples of an epoch run at `width` with the true speedup `actual` there (1-GPU work 3600 s). */
const at = (width: number, actual: number, n = 3) =>
  Array.from({ length: n }, () => ({
    workSeconds: (3600 / actual) * epoch.speedup[String(width) as '8'],
    width,
  }));

describe('learning a speedup table from the widths its samples ran at', () => {
  it("scales an observed width by the narrowest one's work over its own: 8 GPUs at 4x, not 7.5x", () => {
    const learned = learnEpoch(epoch, [...at(2, 1.9), ...at(8, 4)]);
    expect(learned.corrected).toBe(true);
    expect(learned.speedup['8']).toBeCloseTo(4, 9);
    expect(learned.speedup['2']).toBe(1.9);
    // Below the narrowest observed width the table stands (speedup(1) = 1); above the widest, the
    // widest's factor keeps the table's ratio to it; between, log(factor) interpolated in log(width):
    // 4 is half way from 2 (factor 1) to 8 (4 / 7.5).
    expect(learned.speedup['1']).toBe(1);
    expect(learned.speedup['16']).toBeCloseTo(12 * (4 / 7.5), 9);
    expect(learned.speedup['4']).toBeCloseTo(3.6 * Math.sqrt(4 / 7.5), 9);
    // Every sample read against the corrected table implies the one work.
    for (const work of learned.workSamples) expect(work).toBeCloseTo(3600, 6);
    expect(learned.samples).toEqual({ '2': 3, '8': 3 });
  });

  it('keeps a corrected table rising between observed widths: no step mid-way', () => {
    // Linear on paper; the jobs got 2x at 2 GPUs and 4x at 8 (half the table's 8x).
    const table = { workSeconds: 3600, speedup: { '1': 1, '2': 2, '4': 4, '6': 6, '8': 8 } };
    const samples = (width: number, actual: number) =>
      Array.from({ length: 3 }, () => ({ workSeconds: (3600 / actual) * width, width }));
    const learned = learnEpoch(table, [...samples(2, 2), ...samples(8, 4)]);
    expect(learned.speedup['8']).toBeCloseTo(4, 9);
    // The nearest observed width's factor read 4 GPUs at 4x (2's: 1) and 6 at 3x (8's: 0.5); a power
    // law between 2 and 8 reads them as the jobs' own: w^0.5 x sqrt(2).
    expect(learned.speedup['4']).toBeCloseTo(Math.sqrt(2 * 4), 9);
    expect(learned.speedup['6']).toBeCloseTo(Math.sqrt(2 * 6), 9);
    const widths = ['1', '2', '4', '6', '8'];
    for (let i = 1; i < widths.length; i++)
      expect(learned.speedup[widths[i]!]!).toBeGreaterThan(learned.speedup[widths[i - 1]!]!);
  });

  it('keeps a plateau flat: no width between two at 4x reads faster (found in review)', () => {
    const table = { workSeconds: 3600, speedup: { '1': 1, '2': 2, '4': 4, '6': 6, '8': 8 } };
    const samples = (width: number, actual: number) =>
      Array.from({ length: 3 }, () => ({ workSeconds: (3600 / actual) * width, width }));
    const learned = learnEpoch(table, [...samples(4, 4), ...samples(8, 4)]);
    // Interpolating the factor itself read 6 GPUs at 4.25x.
    for (const width of ['4', '6', '8']) expect(learned.speedup[width]).toBeCloseTo(4, 9);
  });

  it('needs three samples at each of two widths; until then the table and the samples stand', () => {
    const samples = [...at(2, 1.9), ...at(8, 4, 2)];
    const learned = learnEpoch(epoch, samples);
    expect(learned.corrected).toBe(false);
    expect(learned.speedup).toEqual(epoch.speedup);
    expect(learned.workSamples).toEqual(samples.map((s) => (s as { workSeconds: number }).workSeconds));
  });

  it('reads each width by its median: one odd job does not move it', () => {
    const odd = { workSeconds: 6000, width: 2 };
    const learned = learnEpoch(epoch, [...at(2, 1.9), odd, ...at(8, 4, 4)]);
    // Medians: 3600 at 2 (of 3600, 3600, 3600, 6000), 3600 x 7.5 / 4 at 8.
    expect(learned.speedup['8']).toBeCloseTo(4, 9);
  });

  it('corrects by at most 2x either way, as trust.ts bounds one sample', () => {
    // 8 GPUs that run as 1 would: 7.5x the work, but trust.ts clamps a sample to twice the profile's.
    const learned = learnEpoch(epoch, [...at(1, 1), ...at(8, 1.2)]);
    expect(learned.speedup['8']).toBeCloseTo(7.5 / 2, 9);
    // A table that undersells 8 GPUs (2x where the jobs got 5x): corrected up, at most twice.
    const undersold = { workSeconds: 3600, speedup: { '1': 1, '8': 2 } };
    const up = learnEpoch(undersold, [
      ...Array.from({ length: 3 }, () => ({ workSeconds: 3600, width: 1 })),
      ...Array.from({ length: 3 }, () => ({ workSeconds: (3600 / 5) * 2, width: 8 })),
    ]);
    expect(up.speedup['8']).toBe(4);
  });

  it('counts samples stored without a width for the work only', () => {
    const learned = learnEpoch(epoch, [4000, 4000, 4000, ...at(8, 4)]);
    expect(learned.corrected).toBe(false);
    expect(learned.speedup).toEqual(epoch.speedup);
    expect(learned.samples).toEqual({ unknown: 3, '8': 3 });
    expect(learned.workSamples.slice(0, 3)).toEqual([4000, 4000, 4000]);
  });
  it("reads each width by its samples as measured, not clamped: work 1.5x the profile's, 8 GPUs at 4x", () => {
    // Found in review: clamped to twice the profile's work before the medians, 8 GPUs read 5.63x.
    const heavier = (width: number, actual: number): WorkSample[] =>
      at(width, actual).map((s) => ({
        ...(s as { workSeconds: number; width: number }),
        workSeconds: (s as { workSeconds: number }).workSeconds * 1.5,
      }));
    const learned = learnEpoch(epoch, [...heavier(1, 1), ...heavier(8, 4)]);
    expect(learned.speedup['8']).toBeCloseTo(4, 9);
    // The work blend reads each sample clamped to twice the profile's, as trust.ts bounds one.
    for (const work of learned.workSamples) expect(work).toBeCloseTo(3600 * 1.5, 6);
  });

  it('keeps the profile table of an epoch whose correction breaks the rules, saying why', () => {
    // 2 GPUs at 3.9x near the 2x-linear limit; jobs there showed 7.8x: beyond it.
    const near = { workSeconds: 3600, speedup: { '1': 1, '2': 3.9 } };
    const samples = [
      ...Array.from({ length: 3 }, () => ({ workSeconds: 3600, width: 1 })),
      ...Array.from({ length: 3 }, () => ({ workSeconds: (3600 / 7.8) * 3.9, width: 2 })),
    ];
    const learned = learnEpoch(near, samples);
    expect(learned.corrected).toBe(false);
    expect(learned.speedup).toEqual(near.speedup);
    expect(learned.refused).toMatch(/speedup at 2 GPUs would be 7\.80, more than 2x linear/);
    expect(learned.samples).toEqual({ '1': 3, '2': 3 });
  });
});

describe('trimSamples: the samples kept of an epoch', () => {
  it('drops from the width with the most, so a corrected width keeps its samples', () => {
    // Found in review: dropped oldest first, 8 GPUs' three samples aged out once the plan gave 4.
    const samples: WorkSample[] = [...at(8, 4), ...at(1, 1)].map((s) => ({ ...s, instanceType: T4 }));
    for (let i = 0; i < 60; i++) {
      samples.push({ workSeconds: 3600, width: 4, instanceType: T4 });
      trimSamples(samples, 50, T4);
    }
    expect(samples).toHaveLength(50);
    expect(samples.filter((s) => typeof s !== 'number' && s.width === 8)).toHaveLength(3);
    expect(samples.filter((s) => typeof s !== 'number' && s.width === 1)).toHaveLength(3);
    expect(learnEpoch(epoch, samples).speedup['8']).toBeCloseTo(4, 9);
  });
});

describe('trimSamples: samples of another instance type', () => {
  it("keeps another type's samples whole while the type in use fills its 50", () => {
    const A10G = 'g5.12xlarge';
    const samples: WorkSample[] = Array.from({ length: 50 }, () => ({
      workSeconds: 5000,
      width: 1,
      instanceType: T4,
    }));
    for (let i = 0; i < 80; i++) {
      samples.push({ workSeconds: 3000, width: 1, instanceType: A10G });
      trimSamples(samples, 50, A10G);
    }
    expect(samples).toHaveLength(100);
    expect(onInstanceType(samples, T4)).toHaveLength(50);
    expect(onInstanceType(samples, A10G)).toHaveLength(50);
  });
});
