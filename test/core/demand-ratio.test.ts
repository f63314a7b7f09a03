import { describe, expect, it } from 'vitest';
import { DEFAULT_DEMAND_RATIO, DemandRatio, expectedGpuSeconds } from '../../src/core/demand-ratio.ts';

const H = 7200;
const options = { ...DEFAULT_DEMAND_RATIO, halfLifeSeconds: H };

describe('the demand ratio', () => {
  it('is 1 before anything is observed, and always 1 when off', () => {
    expect(new DemandRatio(options, 40).ratio()).toBe(1);
    const off = new DemandRatio({ ...options, halfLifeSeconds: 0 }, 40);
    off.observe(0, 0, 0);
    off.observe(3600, 1000, 10);
    expect(off.ratio()).toBe(1);
  });

  it('weighs an observation one half-life old at half', () => {
    // A prior of almost nothing, so the two observations decide.
    const ratio = new DemandRatio({ ...options, priorSeconds: 1e-9 }, 1);
    ratio.observe(0, 100, 100);
    ratio.observe(H, 300, 100);
    expect(ratio.ratio()).toBeCloseTo((100 * 0.5 + 300) / (100 * 0.5 + 100), 6);
  });

  it('starts at the prior and moves toward what is observed as the prior decays', () => {
    const ratio = new DemandRatio(options, 40);
    ratio.observe(0, 0, 0);
    const seen: number[] = [];
    for (let t = 60; t <= 6 * 3600; t += 60) {
      // Twice what the plan expected, every minute.
      ratio.observe(t, 80 * 60, 40 * 60);
      seen.push(ratio.ratio());
    }
    expect(seen[0]).toBeGreaterThan(1);
    expect(seen[0]).toBeLessThan(1.05);
    expect(seen.at(-1)).toBeGreaterThan(1.9);
    expect(seen.at(-1)).toBeLessThan(2);
    for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeGreaterThanOrEqual(seen[i - 1] as number);
  });

  it('never goes below its floor: allocating less than expected does not widen the next plan', () => {
    const ratio = new DemandRatio(options, 40);
    ratio.observe(0, 0, 0);
    ratio.observe(3600, 10 * 3600, 40 * 3600);
    expect(ratio.ratio()).toBe(1);
    const lower = new DemandRatio({ ...options, floor: 0.5 }, 40);
    lower.observe(0, 0, 0);
    lower.observe(3600, 10 * 3600, 40 * 3600);
    expect(lower.ratio()).toBeLessThan(1);
  });
});

describe('what counts as expected', () => {
  it("is the plan's expectation, or what was allocated where the plan could not narrow (anti-windup)", () => {
    expect(expectedGpuSeconds({ planned: 100, allocated: 250, atMinimum: false })).toBe(100);
    // At its minimum a plan cannot narrow: a backlog is no evidence.
    expect(expectedGpuSeconds({ planned: 100, allocated: 250, atMinimum: true })).toBe(250);
    expect(expectedGpuSeconds({ planned: 100, allocated: 50, atMinimum: true })).toBe(100);
    // Held down by the cap: allocation up to the uncapped budget is the load the cap left out.
    expect(expectedGpuSeconds({ planned: 100, allocated: 250, atMinimum: false, uncapped: 180 })).toBe(180);
    expect(expectedGpuSeconds({ planned: 100, allocated: 150, atMinimum: false, uncapped: 180 })).toBe(150);
    expect(expectedGpuSeconds({ planned: 100, allocated: 50, atMinimum: false, uncapped: 180 })).toBe(100);
  });
});
