import { describe, expect, it } from 'vitest';
import { RemainingTime } from '../../../../src/sim/policies/common/remaining.ts';
import { jobView } from '../fakes.ts';
import { PROFILES } from './fakes.ts';

describe('RemainingTime (from the profile only)', () => {
  const listed = new RemainingTime(PROFILES.classes, 'listed');
  const hull = new RemainingTime(PROFILES.classes, 'hull');

  it('adds the rest of the current epoch to the later epochs, at the width', () => {
    expect(listed.seconds(jobView(1), 1)).toBeCloseTo(300);
    expect(listed.seconds(jobView(1), 2)).toBeCloseTo(150);
    expect(listed.seconds(jobView(1), 4)).toBeCloseTo(75);
    // A quarter done: half of epoch 0 (50 s) and all of epoch 1 (200 s) are left.
    expect(listed.seconds(jobView(1, { progressFraction: 0.25 }), 1)).toBeCloseTo(250);
    expect(listed.seconds(jobView(1, { progressFraction: 0.75, statEpoch: 1 }), 1)).toBeCloseTo(100);
    expect(listed.wholeSeconds('lin', 2)).toBeCloseTo(150);
  });

  it('reads an unlisted width as the widest listed below it, or on the concave hull', () => {
    const dip = jobView(2, { app: 'dip' });
    expect(listed.seconds(dip, 3)).toBeCloseTo(200);
    expect(listed.seconds(dip, 4)).toBeCloseTo(200);
    // Hull through (2, 2) and (8, 4): 2 + 2/6 x (k - 2).
    expect(hull.seconds(dip, 4)).toBeCloseTo(400 / (2 + 4 / 6));
    expect(hull.seconds(dip, 3)).toBeCloseTo(400 / (2 + 2 / 6));
    expect(listed.peakWidth(dip)).toBe(8);
  });

  it('names the known classes for an unknown one, and refuses a bad width', () => {
    expect(() => listed.seconds(jobView(3, { app: 'nope' }), 1)).toThrow(
      /no profile for application "nope".*lin, dip/,
    );
    expect(() => listed.seconds(jobView(3), 0)).toThrow(/positive integer/);
  });
});
