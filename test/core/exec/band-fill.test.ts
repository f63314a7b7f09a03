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
  it('is under the band only when the window paid more than the band under the budget', () => {
    // 10 hours at 40: 400 promised; 1.5% of it is 6 GPU-hours.
    expect(windowBelowBand({ debtGpuHours: -6.1, debtHours: 10 }, 40, options)).toBe(true);
    expect(windowBelowBand({ debtGpuHours: -5.9, debtHours: 10 }, 40, options)).toBe(false);
    expect(windowBelowBand({ debtGpuHours: 3, debtHours: 10 }, 40, options)).toBe(false);
  });

  it('waits until the window has counted its hours, and never fills with a band of 0', () => {
    const early = BAND_FILL_AFTER_HOURS - 0.01;
    expect(windowBelowBand({ debtGpuHours: -early * 40, debtHours: early }, 40, options)).toBe(false);
    expect(
      windowBelowBand(
        { debtGpuHours: -BAND_FILL_AFTER_HOURS * 40, debtHours: BAND_FILL_AFTER_HOURS },
        40,
        options,
      ),
    ).toBe(true);
    expect(windowBelowBand({ debtGpuHours: -400, debtHours: 10 }, 40, bandFillOptions(0))).toBe(false);
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
