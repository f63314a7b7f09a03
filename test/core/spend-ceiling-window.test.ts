/**
 * The spend ceiling holds every full, sliding budget window, not just the one ending a horizon out: a
 * spender that takes all the ceiling allows, every minute, whatever it wants, never pays more than
 * budget x (window + slack x horizon) in any 24 hours.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ceilingLookbacks, spendCeiling } from '../../src/core/spend-ceiling.ts';

const BUDGET = 40;
const WINDOW = 24;
const HORIZON = 1;
const SLACK = 0.1;
const TICK = 1 / 60;

/** Paid GPUs each minute when a spender asks for `wanted[hour]` GPUs and gets at most the ceiling. */
function greedyRun(wanted: readonly number[], ceilingOf: typeof spendCeiling = spendCeiling): number[] {
  const perHour = Math.round(1 / TICK);
  const paid: number[] = [];
  // prefix[i]: GPU-hours paid before minute i.
  const prefix = [0];
  for (let i = 0; i < wanted.length * perHour; i++) {
    const elapsedHours = i * TICK;
    const paidInLast = (hours: number) => {
      const from = i - Math.round(hours / TICK);
      if (from < 0) throw new Error(`look-back of ${hours} h before the start`);
      return (prefix[i] as number) - (prefix[from] as number);
    };
    const ceiling = ceilingOf({
      budgetGpuHoursPerHour: BUDGET,
      windowHours: WINDOW,
      horizonHours: HORIZON,
      slack: SLACK,
      elapsedHours,
      paidInLast,
      gpusPerNode: 1,
    });
    const gpus = Math.min(wanted[Math.floor(i / perHour)] as number, ceiling.gpus);
    paid.push(gpus);
    prefix.push((prefix[i] as number) + gpus * TICK);
  }
  return paid;
}

/** The most paid in any `WINDOW` hours of whole minutes, GPU-hours. */
function heaviestWindow(paid: readonly number[]): number {
  const span = Math.round(WINDOW / TICK);
  let sum = 0;
  let most = 0;
  paid.forEach((gpus, i) => {
    sum += gpus * TICK;
    if (i >= span) sum -= (paid[i - span] as number) * TICK;
    most = Math.max(most, sum);
  });
  return most;
}

/** Bursts, lulls and steady hours, as a bursty trace asks for GPUs. */
const demand = fc.array(fc.constantFrom(0, 0, 20, 40, 60, 400), { minLength: 60, maxLength: 72 });

describe('the spend ceiling over a sliding window', () => {
  it('holds every 24 hours within budget x (window + slack x horizon) for a spender that takes it all', () => {
    const cap = BUDGET * (WINDOW + SLACK * HORIZON);
    fc.assert(
      fc.property(demand, (wanted) => {
        expect(heaviestWindow(greedyRun(wanted))).toBeLessThanOrEqual(cap * (1 + 1e-9));
      }),
      { numRuns: 20 },
    );
  });

  it('needs the window ends within the horizon: the spread rule alone lets a full window overfill', () => {
    // Bursts after lulls: the ceiling's credit for the lull is spent in the last minutes it counts.
    const wanted = Array.from({ length: 72 }, (_, h) => (h % 5 === 0 ? 0 : h % 5 === 1 ? 60 : 400));
    const spreadOnly: typeof spendCeiling = (input) =>
      spendCeiling({ ...input, elapsedHours: Math.min(input.elapsedHours, WINDOW - HORIZON) });
    const cap = BUDGET * (WINDOW + SLACK * HORIZON);
    expect(heaviestWindow(greedyRun(wanted, spreadOnly))).toBeGreaterThan(cap * 1.01);
    expect(heaviestWindow(greedyRun(wanted))).toBeLessThanOrEqual(cap * (1 + 1e-9));
  });

  it('asks for the spread look-back first, then one per window end once the window is full', () => {
    expect(ceilingLookbacks(24, 1, 5)).toEqual([5]);
    const full = ceilingLookbacks(24, 1, 30);
    expect(full[0]).toBe(23);
    expect(full).toHaveLength(60);
    expect(Math.max(...full)).toBeCloseTo(24 - 1 / 60, 9);
    // Partly full: only the window ends whose window starts after the service did.
    const partly = ceilingLookbacks(24, 1, 23.5);
    expect(partly[0]).toBe(23);
    expect(partly.slice(1).every((back) => back >= 23 && back <= 23.5)).toBe(true);
  });
});
