import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type DrainJob, drainWidths } from '../../../src/core/exec/drain-widths.ts';
import { flat, oneEpochClass } from './one-epoch.ts';
import type { ClassProfile } from '../../../src/core/profile.ts';

// Nearly linear to 8 GPUs, then flat.
const scales = oneEpochClass('scales', { 1: 1, 2: 1.95, 4: 3.8, 8: 7.2, 16: 7.4 });
const classes = new Map([
  ['scales', scales],
  ['flat', flat],
]);
const job = (id: number, app: string, width: number, progressFraction = 0): DrainJob => ({
  id,
  app,
  statEpoch: 0,
  progressFraction,
  width,
  restarting: false,
});

describe('drainWidths', () => {
  it('hands the GPUs to the job they save the most time on, never past where it stops speeding up', () => {
    const out = drainWidths([job(1, 'scales', 1), job(2, 'flat', 1)], classes, 40);
    // 8 GPUs save 8.6 of scales' 10 hours; 16 would save 0.1 more; flat gains too little for a restart.
    expect(out?.get(1)).toBe(8);
    expect(out?.get(2)).toBe(1);
  });

  it('gives more to the job with more work left', () => {
    const out = drainWidths([job(1, 'scales', 2, 0.9), job(2, 'scales', 2, 0)], classes, 12);
    expect(out?.get(2)).toBe(8);
    expect(out?.get(1)).toBe(4);
  });

  it('never narrows a job, and stays within the GPUs allowed', () => {
    const out = drainWidths([job(1, 'scales', 4), job(2, 'scales', 4)], classes, 10);
    // 2 GPUs free: neither job can reach its next listed width (8) with them.
    expect(out?.get(1)).toBe(4);
    expect(out?.get(2)).toBe(4);
    const wider = drainWidths([job(1, 'scales', 4), job(2, 'scales', 4)], classes, 12.7);
    expect([wider?.get(1), wider?.get(2)].sort()).toEqual([4, 8]);
  });

  it('leaves a job with little work left where it is (a restart would not pay)', () => {
    // 20 restarts of 60 s: a job must have at least 1200 s left at its width.
    const out = drainWidths([job(1, 'scales', 1, 0.97)], classes, 16);
    expect(out?.get(1)).toBe(1);
  });

  it('leaves a restarting job alone', () => {
    const out = drainWidths([{ ...job(1, 'scales', 1), restarting: true }], classes, 16);
    expect(out?.get(1)).toBe(1);
  });

  it('has nothing to hand out when the jobs own widths do not fit', () => {
    expect(drainWidths([job(1, 'scales', 8), job(2, 'scales', 8)], classes, 12)).toBeUndefined();
    // One GPU over is over.
    expect(drainWidths([job(1, 'scales', 8), job(2, 'scales', 5)], classes, 12.9)).toBeUndefined();
  });

  it('hands out no GPU past the whole GPUs allowed, the last step included', () => {
    // 7 GPUs free: one job goes to 8, and the 3 left cannot take the other to 8 (a 16th GPU would be
    // past 15.5, and past 15).
    for (const gpus of [15, 15.5]) {
      const out = drainWidths([job(1, 'scales', 4), job(2, 'scales', 4)], classes, gpus);
      expect([out?.get(1), out?.get(2)].sort()).toEqual([4, 8]);
    }
  });

  it('keeps every job at or above its width and the total within the GPUs allowed, whatever the jobs', () => {
    const jobs = fc.array(
      fc.record({
        app: fc.constantFrom('scales', 'flat'),
        width: fc.constantFrom(1, 2, 3, 4, 8),
        progress: fc.constantFrom(0, 0.5, 0.99),
      }),
      { minLength: 1, maxLength: 5 },
    );
    fc.assert(
      fc.property(jobs, fc.double({ min: 0, max: 48, noNaN: true }), (specs, gpus) => {
        const drain = specs.map((s, i) => job(i + 1, s.app, s.width, s.progress));
        const out = drainWidths(drain, classes, gpus);
        // Whole GPUs, with the hair of tolerance the drain reads them with (15 - 1e-12 is 15).
        const whole = Math.floor(gpus + 1e-9);
        const own = drain.reduce((sum, j) => sum + j.width, 0);
        if (own > whole) {
          expect(out).toBeUndefined();
          return;
        }
        expect(out).toBeDefined();
        let total = 0;
        for (const j of drain) {
          const width = out?.get(j.id) as number;
          expect(width).toBeGreaterThanOrEqual(j.width);
          total += width;
        }
        expect(total).toBeLessThanOrEqual(whole);
      }),
      { numRuns: 300 },
    );
  });
});

describe('the drain, on widths where a speedup dips and GPUs a job gave back', () => {
  const profile = (name: string, work: number, speedup: Record<string, number>) =>
    ({ name, weight: 1, rescaleSeconds: 10, epochs: [{ workSeconds: work, speedup }] }) as ClassProfile;
  const running = (id: number, app: string, width: number) => ({
    id,
    app,
    statEpoch: 0,
    progressFraction: 0,
    width,
    restarting: false,
  });

  it('reads a job on a dip width at its measured speed: 5 GPUs (2.0x) to 8 (5.0x) is worth it', () => {
    const dip = profile('d', 100_000, { '1': 1, '4': 3.6, '5': 2, '8': 5 });
    expect(drainWidths([running(1, 'd', 5)], new Map([['d', dip]]), 8)?.get(1)).toBe(8);
  });

  it('offers the GPUs a widening gave back (under 1.1x) to the other jobs', () => {
    const classes = new Map([
      ['big', profile('big', 100_000, { '1': 1, '8': 6, '9': 6.5 })],
      ['small', profile('small', 2_000, { '1': 1, '2': 1.9 })],
    ]);
    const out = drainWidths([running(1, 'big', 8), running(2, 'small', 1)], classes, 10);
    // big 8 -> 9 is 1.08x: it keeps 8, and small takes the GPU (1.9x).
    expect(out?.get(1)).toBe(8);
    expect(out?.get(2)).toBe(2);
  });
});
