import { describe, expect, it } from 'vitest';
import { RemainingTime } from '../../../../src/sim/policies/common/remaining.ts';
import { jobView } from '../fakes.ts';
import { CLASSES } from './fakes.ts';

const model = new RemainingTime(CLASSES);

describe('RemainingTime', () => {
  it('is the rest of the current epoch plus the later epochs, at the width', () => {
    // "lin": 2 epochs of 1200 s. At progress 0.25 (epoch 0), half of epoch 0 is left: 600 + 1200 s on 1 GPU.
    const job = jobView(1, { progressFraction: 0.25, statEpoch: 0 });
    expect(model.seconds(job, 1)).toBeCloseTo(1800, 9);
    expect(model.seconds(job, 4)).toBeCloseTo(450, 9);
    // In epoch 1 at 0.75: a quarter of the job, 600 s on 1 GPU.
    expect(model.seconds(jobView(1, { progressFraction: 0.75, statEpoch: 1 }), 2)).toBeCloseTo(300, 9);
  });

  it('uses the widest listed speedup at or below an unlisted width, and the widest beyond the table', () => {
    const job = jobView(1); // all 2400 s left
    expect(model.seconds(job, 3)).toBeCloseTo(1200, 9); // speedup of 2 GPUs
    expect(model.seconds(job, 20)).toBeCloseTo(300, 9); // speedup of 8 GPUs
  });

  it('clamps a progress past its epoch (the engine cuts epochs at whole data epochs)', () => {
    // Still in epoch 0 at progress 0.55: nothing of epoch 0 counted, epoch 1 whole.
    expect(model.seconds(jobView(1, { progressFraction: 0.55, statEpoch: 0 }), 1)).toBeCloseTo(1200, 9);
  });

  it('lists the widths every epoch lists, and names unknown applications and bad widths', () => {
    expect(model.widths('lin')).toEqual([1, 2, 4, 8]);
    expect(model.widths('flat')).toEqual([1, 2, 4]);
    expect(() => model.seconds(jobView(1, { app: 'nope' }), 1)).toThrow(
      /no profile for application "nope"; the profiles have: lin, flat/,
    );
    expect(() => model.seconds(jobView(1), 0)).toThrow(/positive integer number of GPUs, got 0/);
  });
});
