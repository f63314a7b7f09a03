/**
 * The spend ceiling holds every full, sliding budget window, not just the one ending a horizon out: a
 * spender that takes all the ceiling allows, every minute, whatever it wants, never pays more than
 * budget x (window + slack x horizon) in any 24 hours. With the look-ahead it spreads the payback a
 * full window owes when a lull leaves it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ceilingLookbacks, defaultLookaheadHours, spendCeiling } from '../../src/core/spend-ceiling.ts';

const BUDGET = 40;
const WINDOW = 24;
const HORIZON = 1;
const SLACK = 0.1;
const TICK = 1 / 60;

/** Paid GPUs each minute when a spender asks for `wanted[hour]` GPUs and gets at most the ceiling. */
function greedyRun(
  wanted: readonly number[],
  ceilingOf: typeof spendCeiling = spendCeiling,
  lookaheadHours = HORIZON,
): number[] {
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
      lookaheadHours,
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

  it('holds every 24 hours as well when it looks 3 hours ahead', () => {
    const cap = BUDGET * (WINDOW + SLACK * HORIZON);
    fc.assert(
      fc.property(demand, (wanted) => {
        expect(heaviestWindow(greedyRun(wanted, spendCeiling, 3))).toBeLessThanOrEqual(cap * (1 + 1e-9));
      }),
      { numRuns: 20 },
    );
  });

  it('spreads the payback of a lull spent in a burst over the look-ahead, not one hour', () => {
    // Steady at the budget, a 3-hour lull, a burst that spends its room, then more demand than the
    // budget: 24 hours after the lull the window owes the burst's excess back.
    const wanted = Array.from({ length: 40 }, (_, h) => (h >= 6 && h < 9 ? 0 : h >= 9 && h < 12 ? 400 : 60));
    const hourly = (paid: readonly number[]) =>
      Array.from({ length: 40 }, (_, h) => paid.slice(h * 60, (h + 1) * 60).reduce((a, b) => a + b, 0) / 60);
    const lowest = (paid: readonly number[]) => Math.min(...hourly(paid).slice(24, 40));
    const oneHour = greedyRun(wanted, spendCeiling, 1);
    const threeHours = greedyRun(wanted, spendCeiling, 3);
    // Measured: the deepest hour pays 1.9 GPUs with one hour's look, 14.4 with three.
    expect(lowest(oneHour)).toBeLessThan(BUDGET / 10);
    expect(lowest(threeHours)).toBeGreaterThan(BUDGET / 4);
    // Looking ahead moves the payback earlier; it does not make it larger.
    const paidAfter = (paid: readonly number[]) => paid.slice(24 * 60).reduce((a, b) => a + b, 0) / 60;
    expect(paidAfter(threeHours)).toBeGreaterThan(paidAfter(oneHour) * 0.97);
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

  it('adds one window end every 6 minutes from the horizon to the look-ahead', () => {
    const full = ceilingLookbacks(24, 1, 30, 3);
    expect(full).toHaveLength(60 + 20);
    expect(Math.min(...full.slice(1))).toBeCloseTo(21, 9);
    expect(ceilingLookbacks(24, 1, 30, 1)).toEqual(ceilingLookbacks(24, 1, 30));
    // Only windows whose past part the history holds: 22 hours in, those ending 2 to 3 hours ahead.
    const partly = ceilingLookbacks(24, 1, 22, 3).slice(1);
    expect(partly).toHaveLength(11);
    expect(partly.every((back) => back >= 21 - 1e-9 && back <= 22 + 1e-9)).toBe(true);
    // Scaled with the horizon: a 36 s horizon checks one window end every 3.6 s past it.
    expect(ceilingLookbacks(0.1, 0.01, 1, 0.03)).toHaveLength(60 + 20);
  });

  it('looks three horizons ahead unless told, within the window', () => {
    expect(defaultLookaheadHours(1, 24)).toBe(3);
    expect(defaultLookaheadHours(0.01, 0.1)).toBeCloseTo(0.03, 12);
    expect(defaultLookaheadHours(2, 7)).toBe(5);
    expect(defaultLookaheadHours(5, 8)).toBe(5);
  });
});

describe('what the spend ceiling says of the window so far', () => {
  it('counts debt as paid above what the budget promised over the hours it counts', () => {
    const ceiling = (paidPerHour: number, elapsedHours: number) =>
      spendCeiling({
        budgetGpuHoursPerHour: BUDGET,
        windowHours: WINDOW,
        horizonHours: HORIZON,
        slack: SLACK,
        lookaheadHours: 3,
        elapsedHours,
        paidInLast: (hours) => paidPerHour * hours,
        gpusPerNode: 1,
      });
    // 10 hours at 30 against 40: 100 GPU-hours under, room to spend.
    const under = ceiling(30, 10);
    expect(under.debtHours).toBe(10);
    expect(under.promisedGpuHours).toBe(400);
    expect(under.debtGpuHours).toBe(-100);
    expect(under.spendableGpuHours).toBe(100);
    // A full window counts its last 23 hours: at 42 against 40, 46 over.
    const over = ceiling(42, 30);
    expect(over.debtHours).toBe(WINDOW - HORIZON);
    expect(over.debtGpuHours).toBeCloseTo(46, 9);
    expect(over.spendableGpuHours).toBeCloseTo(-46, 9);
  });
});

describe("the spend ceiling's nodes", () => {
  const ceiling = (paidGpuHours: number, heldNodes?: number) =>
    spendCeiling({
      budgetGpuHoursPerHour: 8,
      windowHours: WINDOW,
      horizonHours: HORIZON,
      slack: SLACK,
      lookaheadHours: 3,
      elapsedHours: 3,
      paidInLast: () => paidGpuHours,
      gpusPerNode: 4,
      ...(heldNodes === undefined ? {} : { heldNodes }),
    });

  it('counts a ceiling of a whole number of nodes as those nodes, though floating point falls a hair short', () => {
    // 3 hours at 8 promised 24, 8.8 paid: the ceiling is 24 + 8.8 - 8.8 = 24 GPUs, which the
    // arithmetic reads as 23.999999999999996.
    const exact = ceiling(8.8);
    expect(exact.gpus).toBeCloseTo(24, 9);
    expect(exact.nodes).toBe(6);
  });

  it('keeps a held node only while the ceiling is within half a node of it', () => {
    // 10.6 paid: a ceiling of 22.2 GPUs, 5 whole nodes of 4 and 0.55 of the sixth.
    expect(ceiling(10.6).nodes).toBe(5);
    expect(ceiling(10.6, 6).nodes).toBe(6);
    // 12.6 paid: 20.2 GPUs, more than half a node below the sixth: the group gives it back, and a
    // seventh node held goes as well.
    expect(ceiling(12.6, 6).nodes).toBe(5);
    expect(ceiling(12.6, 7).nodes).toBe(5);
    // Holding fewer nodes than the ceiling allows lowers nothing.
    expect(ceiling(0, 2).nodes).toBe(Math.floor(ceiling(0).gpus / 4));
  });
});
