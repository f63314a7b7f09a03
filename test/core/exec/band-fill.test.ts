import { describe, expect, it } from 'vitest';
import {
  BAND_FILL_AFTER_HOURS,
  BAND_FILL_DRAIN,
  bandFillOptions,
  windowBelowBand,
} from '../../../src/core/exec/band-fill.ts';
import { drainWidths } from '../../../src/core/exec/drain-widths.ts';
import { oneEpochClass } from './one-epoch.ts';

const options = bandFillOptions(0.015);

describe('windowBelowBand', () => {
  // 10 hours at 40 promised 400 GPU-hours; 1.5% of it is 6.
  const tenHours = (debtGpuHours: number) => ({ debtGpuHours, promisedGpuHours: 400, debtHours: 10 });

  it('is under the band only when the window paid more than the band under what was promised', () => {
    expect(windowBelowBand(tenHours(-6.1), options)).toBe(true);
    expect(windowBelowBand(tenHours(-5.9), options)).toBe(false);
    expect(windowBelowBand(tenHours(3), options)).toBe(false);
  });

  it('judges a window across a budget change against what each budget promised for its hours', () => {
    // 8 hours at 10, then 2 at 40: promised 160, paid 156 (2.5% under). Judged against the budget now
    // (40 x 10 h), 2.5% under would read 61% under; against 40 raised from 10 the other way, a window
    // 4% under would read inside the band.
    const afterRaise = { debtGpuHours: -4, promisedGpuHours: 160, debtHours: 10 };
    expect(windowBelowBand(afterRaise, options)).toBe(true);
    // 8 hours at 40, then 2 at 10: promised 340, paid 339 (0.3% under): inside the band.
    const afterCut = { debtGpuHours: -1, promisedGpuHours: 340, debtHours: 10 };
    expect(windowBelowBand(afterCut, options)).toBe(false);
  });

  it('waits until the window has counted its hours, and never fills with a band of 0', () => {
    const hours = (debtHours: number) => ({
      debtGpuHours: -debtHours * 40,
      promisedGpuHours: debtHours * 40,
      debtHours,
    });
    expect(windowBelowBand(hours(BAND_FILL_AFTER_HOURS - 0.01), options)).toBe(false);
    expect(windowBelowBand(hours(BAND_FILL_AFTER_HOURS), options)).toBe(true);
    expect(windowBelowBand(tenHours(-400), bandFillOptions(0))).toBe(false);
  });

  it('gates a window shorter than its 6 hours on all the hours it counts', () => {
    // A 5-hour window with a 1-hour horizon counts its debt over 4 hours at most.
    const short = bandFillOptions(0.015, 4);
    expect(short.afterHours).toBe(4);
    expect(windowBelowBand({ debtGpuHours: -80, promisedGpuHours: 160, debtHours: 4 }, short)).toBe(true);
  });

  it('refuses a band outside [0, 1), naming what is allowed', () => {
    for (const band of [-0.01, 1, Number.NaN]) {
      expect(() => bandFillOptions(band)).toThrow(/share of the budget from 0 \(never\) to below 1/);
    }
  });
});

describe('the fill rule', () => {
  it('widens a job where a GPU adds less than half a GPU, which the drain leaves alone', () => {
    // Past 4 GPUs each one adds 0.3 of a GPU's speedup: the drain's floor (0.5) stops there.
    const sublinear = oneEpochClass('sublinear', { 1: 1, 2: 1.9, 4: 3.6, 8: 4.8 });
    const classes = new Map([['sublinear', sublinear]]);
    const job = { id: 1, app: 'sublinear', statEpoch: 0, progressFraction: 0, width: 4, restarting: false };
    expect(drainWidths([job], classes, 8)?.get(1)).toBe(4);
    expect(drainWidths([job], classes, 8, BAND_FILL_DRAIN)?.get(1)).toBe(8);
  });
});
