import { describe, expect, it } from 'vitest';
import { DEFAULT_PLAN_CAP, planBudgetCap, planCapOptions } from '../../src/core/plan-cap.ts';

const cap = (minFeasibleBudget: number, unspentGpuHours: number, multiple = 2, relaxHours = 4) =>
  planBudgetCap({ budget: 40, minFeasibleBudget, unspentGpuHours }, { multiple, relaxHours });

describe('the plan cap', () => {
  it('is the multiple of the load minimum with nothing unspent, and ignores debt', () => {
    expect(cap(10, 0)).toBe(20);
    expect(cap(10, -8)).toBe(20);
    expect(cap(7.5, 0, 3)).toBe(22.5);
  });

  it('rises by itself for every relaxHours of budget left unspent', () => {
    // 160 GPU-hours unspent at 40 is 4 hours of budget: with relaxHours 4 the cap doubles.
    expect(cap(10, 160)).toBe(40);
    expect(cap(10, 80)).toBe(30);
    expect(cap(10, 80, 2, 2)).toBe(40);
  });

  it('is no cap with multiple 0 or no load to plan for', () => {
    expect(cap(10, 0, 0)).toBe(Number.POSITIVE_INFINITY);
    expect(cap(0, 0)).toBe(Number.POSITIVE_INFINITY);
  });

  it('checks its options, naming what is allowed', () => {
    expect(planCapOptions(2, 4)).toEqual(DEFAULT_PLAN_CAP);
    expect(planCapOptions(2, 4).multiple).toBe(2);
    expect(() => planCapOptions(0.5, 4)).toThrow(/0 \(no cap\) or a number >= 1, got 0.5/);
    expect(() => planCapOptions(2, 0)).toThrow(/relax hours must be a number > 0, got 0/);
  });
});
