import { describe, expect, it } from 'vitest';
import { creditFactor, creditOptions, DEFAULT_CREDIT } from '../../src/core/credit.ts';

const factor = (loadNeeds: number, unspentGpuHours: number, spendHours = 4, loadShare = 0.9) =>
  creditFactor({ budget: 40, loadNeeds, unspentGpuHours }, { spendHours, loadShare });

describe('credit for a tight budget', () => {
  it("adds the window's unspent budget, spread over spendHours, while the load needs most of the budget", () => {
    // 80 GPU-hours unspent over 4 hours is 20 GPU-hours/hour on top of 40: the plan gets 1.5x.
    expect(factor(36, 80)).toBeCloseTo(1.5, 12);
    expect(factor(60, 40)).toBeCloseTo(1.25, 12);
    expect(factor(36, 80, 8)).toBeCloseTo(1.25, 12);
  });

  it('keeps the credit for later while the load needs a fifth of the budget less than loadShare, or less', () => {
    expect(factor(28, 80)).toBe(1);
    expect(factor(20, 80)).toBe(1);
    expect(factor(12, 80, 4, 0.5)).toBe(1);
    expect(factor(20, 80, 4, 0.5)).toBeCloseTo(1.5, 12);
  });

  it('phases the credit in over that fifth, so a load at the gate does not flip the plan', () => {
    // 80 unspent over 4 hours is half the budget at loadShare; half of that halfway into the ramp.
    expect(factor(32, 80)).toBeCloseTo(1.25, 12);
    expect(factor(34, 80)).toBeCloseTo(1.375, 12);
    // Continuous: a load that moves a little moves the credit a little.
    expect(factor(28.01, 80) - factor(27.99, 80)).toBeLessThan(0.01);
    expect(factor(36.01, 80) - factor(35.99, 80)).toBeLessThan(0.01);
  });

  it('adds nothing in debt, with nothing unspent, with spendHours 0 or no budget', () => {
    expect(factor(40, -10)).toBe(1);
    expect(factor(40, 0)).toBe(1);
    expect(factor(40, 80, 0)).toBe(1);
    expect(creditFactor({ budget: 0, loadNeeds: 40, unspentGpuHours: 80 }, DEFAULT_CREDIT)).toBe(1);
  });

  it('checks its options, naming what is allowed', () => {
    expect(creditOptions(4, 0.9)).toEqual(DEFAULT_CREDIT);
    expect(creditOptions(0, 0.9).spendHours).toBe(0);
    expect(() => creditOptions(-1, 0.9)).toThrow(/spend hours must be a number >= 0 \(0: never\), got -1/);
    expect(() => creditOptions(4, 0)).toThrow(/load share must be a number > 0, got 0/);
  });
});
