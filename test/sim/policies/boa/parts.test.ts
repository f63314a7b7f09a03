import { describe, expect, it } from 'vitest';
import type { MixedPlan } from '../../../../src/core/plan.ts';
import type { ClassProfile } from '../../../../src/core/profile.ts';
import type { JobView } from '../../../../src/sim/policy.ts';
import { BudgetControl, DEFAULT_BUDGET_CONTROL } from '../../../../src/sim/policies/boa/budget-control.ts';
import { StratifiedDraws } from '../../../../src/sim/policies/boa/draws.ts';
import { EpochClock } from '../../../../src/sim/policies/boa/lookahead.ts';
import { DEFAULT_ONLINE_RATES, OnlineRates } from '../../../../src/sim/policies/boa/online-rates.ts';
import { PaidRatioEstimator } from '../../../../src/sim/policies/boa/paid-ratio.ts';
import { widthsFor } from '../../../../src/core/shares.ts';
import { ratesMoved } from '../../../../src/service/estimators.ts';

describe('plan shares', () => {
  const plan: MixedPlan = {
    a: [
      { share: 0.25, widths: [1, 2] },
      { share: 0.75, widths: [4, 4] },
    ],
  };

  it('picks the plan whose cumulative share passes the draw', () => {
    expect(widthsFor(plan, 'a', 0)).toEqual([1, 2]);
    expect(widthsFor(plan, 'a', 0.2499)).toEqual([1, 2]);
    expect(widthsFor(plan, 'a', 0.25)).toEqual([4, 4]);
    expect(widthsFor(plan, 'a', 0.999)).toEqual([4, 4]);
    expect(widthsFor(plan, 'b', 0.5)).toBeUndefined();
  });

  it('splits a class in its planned shares from the first jobs on (stratified draws)', () => {
    const draws = new StratifiedDraws(3);
    const picks = Array.from({ length: 40 }, () => widthsFor(plan, 'a', draws.draw('a'))?.[0]);
    const ones = picks.filter((k) => k === 1).length;
    // Golden-ratio draws: every prefix of n jobs is within about one job of its share.
    expect(Math.abs(ones - 10)).toBeLessThanOrEqual(1);
    expect(Math.abs(picks.slice(0, 8).filter((k) => k === 1).length - 2)).toBeLessThanOrEqual(1);
  });

  it('draws reproducibly per seed, in [0, 1), differently for other seeds', () => {
    const a = new StratifiedDraws(1);
    const b = new StratifiedDraws(1);
    const c = new StratifiedDraws(2);
    const seq = (d: StratifiedDraws) => Array.from({ length: 5 }, () => d.draw('x'));
    const first = seq(a);
    expect(seq(b)).toEqual(first);
    expect(seq(c)).not.toEqual(first);
    for (const u of first) expect(u >= 0 && u < 1).toBe(true);
  });
});

describe("online arrival rates (the service's estimator)", () => {
  it('blends the window with a prior of no arrivals worth two hours, then drops what left the window', () => {
    const rates = new OnlineRates(['a', 'b', 'c'], { ...DEFAULT_ONLINE_RATES, holdHalfLifeHours: 0 });
    rates.record('a', 0);
    rates.record('a', 60);
    // Two jobs, 120 s observed plus 2 prior hours: 2 / (2 + 1/30) per hour, not 60.
    expect(rates.ratesAt(120).a).toBeCloseTo(2 / (2 + 120 / 3600), 6);
    rates.record('b', 7200);
    const at2h = rates.ratesAt(7200);
    expect(at2h.a).toBeCloseTo(2 / 4, 6);
    expect(at2h.b).toBeCloseTo(1 / 4, 6);
    // A class never seen has no rate and is not planned.
    expect(at2h.c).toBeUndefined();
    const later = rates.ratesAt(86_400 + 100);
    expect(later.a).toBeUndefined();
    expect(later.b).toBeCloseTo(1 / 26, 12);
  });

  it('holds a fall by default: the estimates at the last arrival of the window, halving every 48 hours', () => {
    const rates = new OnlineRates(['a', 'b']);
    rates.record('a', 0);
    rates.record('b', 7200);
    const later = rates.ratesAt(86_400 + 100);
    // a's arrival left the window, but at b's arrival each read 1 / 4 h.
    const aged = 0.5 ** ((86_400 + 100 - 7200) / 3600 / 48);
    expect(later.a).toBeCloseTo((1 / 4) * aged, 6);
    expect(later.b).toBeCloseTo((1 / 4) * aged, 6);
  });

  it('asks for a re-plan when a class moved by more than a quarter since the planned rates', () => {
    const rates = new OnlineRates(['a']);
    rates.record('a', 0);
    const planned = rates.ratesAt(3600);
    expect(ratesMoved(planned, rates.ratesAt(3600))).toBe(false);
    rates.record('a', 3600);
    expect(ratesMoved(planned, rates.ratesAt(3600))).toBe(true);
  });

  it('asks for a re-plan when a class fell to 0, which the online rates leave out, as the service does', () => {
    // The service's loadRates lists a class at 0; the online rates leave it out: the same fall.
    expect(ratesMoved({ a: 1, b: 0.5 }, { a: 1, b: 0 })).toBe(true);
    expect(ratesMoved({ a: 1, b: 0.5 }, { a: 1 })).toBe(true);
    // With no hold, b's only arrival leaves the window while a keeps its rate.
    const rates = new OnlineRates(['a', 'b'], { ...DEFAULT_ONLINE_RATES, holdHalfLifeHours: 0, rise: null });
    rates.record('b', 0);
    for (let h = 1; h <= 23; h++) rates.record('a', h * 3600);
    const planned = rates.ratesAt(24 * 3600 - 1);
    expect(planned.b).toBeGreaterThan(0);
    const now = rates.ratesAt(24 * 3600 + 1);
    expect(now.b).toBeUndefined();
    expect(ratesMoved(planned, now)).toBe(true);
  });
});

describe('paid / allocated ratio', () => {
  it('books node time between ticks plus the release lag of nodes that went away', () => {
    const estimator = new PaidRatioEstimator({
      priorRatio: 1,
      priorGpus: 0,
      priorSeconds: 0,
      halfLifeSeconds: Number.POSITIVE_INFINITY,
      releaseLagSeconds: 30,
    });
    expect(estimator.observe(0, new Map([[1, 4]]), 0)).toBe(0);
    // Two nodes paid for 60 s; 4 GPUs allocated for 60 s.
    expect(
      estimator.observe(
        60,
        new Map([
          [1, 4],
          [2, 4],
        ]),
        240,
      ),
    ).toBe(480);
    expect(estimator.ratio()).toBe(2);
    // Node 2 went away: 60 s of node 1 plus 30 s of node 2's lag.
    expect(estimator.observe(120, new Map([[1, 4]]), 240)).toBe(240 + 120);
    expect(estimator.ratio()).toBeCloseTo(840 / 480, 12);
  });

  it('starts at its prior and never reports below 1', () => {
    const estimator = new PaidRatioEstimator({ ...DEFAULT_BUDGET_CONTROL.paidRatio, priorGpus: 10 });
    expect(estimator.ratio()).toBe(1);
    estimator.observe(0, new Map(), 0);
    estimator.observe(3600, new Map(), 3600 * 50);
    expect(estimator.ratio()).toBe(1);
  });
});

describe('budget control', () => {
  // Off by default, as in the service (the demand ratio is its opt-in); on here, to check them.
  /** 3 nodes of 4 GPUs: 12 GPU-hours an hour. */
  const THREE_NODES = new Map([
    [1, 4],
    [2, 4],
    [3, 4],
  ]);
  const MECHANISMS = { ...DEFAULT_BUDGET_CONTROL, paybackSeconds: 6 * 3600, demandHalfLifeSeconds: 2 * 3600 };
  // The catch-up of a deficit is off by default; 2 hours here, to check the mechanism.
  const options = {
    ...MECHANISMS,
    catchUpSeconds: 2 * 3600,
    paidRatio: { ...DEFAULT_BUDGET_CONTROL.paidRatio, priorSeconds: 1e12 },
  };

  it('plans above the budget after underspending, below it after overspending, within its bounds', () => {
    const under = new BudgetControl(10, options);
    under.observe(0, new Map(), 0);
    under.observe(3600, new Map([[1, 4]]), 4 * 3600);
    // 6 GPU-hours short after an hour, caught up over 2 hours: 10 + 3.
    expect(under.controlBudget()).toBeCloseTo(13, 6);
    expect(under.paidAverage()).toBeCloseTo(4, 12);

    const over = new BudgetControl(10, options);
    over.observe(0, new Map(), 0);
    over.observe(3600, THREE_NODES, 12 * 3600);
    // 2 GPU-hours over, paid back over 6 hours.
    expect(over.controlBudget()).toBeCloseTo(10 - 2 / 6, 6);

    const far = new BudgetControl(10, options);
    far.observe(0, new Map(), 0);
    far.observe(36_000, new Map(), 0);
    expect(far.controlBudget()).toBeCloseTo(30, 6);
  });

  it('divides the budget by the demand ratio: what the plans allocated over what they expected', () => {
    // Plans that expected 10 GPUs allocated 20 for hours (rates under-estimated): plan near half.
    const control = new BudgetControl(10, {
      ...MECHANISMS,
      catchUpSeconds: 1e12,
      paybackSeconds: 1e12,
    });
    control.observe(0, new Map(), 0, 0);
    for (let hour = 1; hour <= 12; hour++) {
      control.observe(hour * 3600, new Map(), 20 * 3600, 10 * 3600);
    }
    // Prior: one hour at 1; then 12 hours at 2, forgotten with a 2-hour half-life.
    expect(control.demand()).toBeGreaterThan(1.9);
    expect(control.demand()).toBeLessThan(2);
    expect(control.controlBudget()).toBeCloseTo(10 / control.demand(), 6);
    // With no demand half-life the ratio is not used.
    // Plans that allocated less than they expected (a lull, the drain) do not widen: floored at 1.
    const lull = new BudgetControl(10, { ...MECHANISMS, paybackSeconds: 1e12 });
    lull.observe(0, new Map(), 0, 0);
    for (let hour = 1; hour <= 12; hour++) lull.observe(hour * 3600, new Map(), 5 * 3600, 10 * 3600);
    expect(lull.demand()).toBe(1);
    expect(lull.controlBudget()).toBeCloseTo(10, 6);
    const unfloored = new BudgetControl(10, { ...MECHANISMS, demandFloor: 0 });
    unfloored.observe(0, new Map(), 0, 0);
    for (let hour = 1; hour <= 12; hour++) unfloored.observe(hour * 3600, new Map(), 5 * 3600, 10 * 3600);
    expect(unfloored.demand()).toBeLessThan(0.6);
    // And an unspent budget is not banked by default: after an idle hour the plan stays at the budget.
    const idle = new BudgetControl(10, {
      ...MECHANISMS,
      paidRatio: { ...MECHANISMS.paidRatio, priorSeconds: 1e12 },
    });
    idle.observe(0, new Map(), 0, 0);
    idle.observe(3600, new Map(), 0, 0);
    expect(idle.controlBudget()).toBeCloseTo(10, 6);
    const off = new BudgetControl(10, { ...MECHANISMS, demandHalfLifeSeconds: 0 });
    off.observe(0, new Map(), 0, 0);
    off.observe(3600, new Map(), 20 * 3600, 10 * 3600);
    expect(off.demand()).toBe(1);
  });

  it("is the service's control by default: no demand ratio, and a surplus is not paid back", () => {
    const control = new BudgetControl(10, {
      ...DEFAULT_BUDGET_CONTROL,
      paidRatio: { ...DEFAULT_BUDGET_CONTROL.paidRatio, priorSeconds: 1e12 },
    });
    control.observe(0, new Map(), 0, 0);
    // An hour at 3 nodes of 4 GPUs (2 GPU-hours over) on plans that expected half what they allocated.
    control.observe(3600, THREE_NODES, 12 * 3600, 6 * 3600);
    expect(control.demand()).toBe(1);
    expect(control.controlBudget()).toBeCloseTo(10, 6);
  });
});

describe('epoch look-ahead from the profile', () => {
  const cls: ClassProfile = {
    name: 'a',
    weight: 1,
    rescaleSeconds: 30,
    epochs: [
      { workSeconds: 400, speedup: { '1': 1, '2': 2, '4': 3 } },
      { workSeconds: 800, speedup: { '1': 1, '4': 4 } },
    ],
  };
  const job = (over: Partial<JobView>): JobView => ({
    id: 1,
    name: 'j',
    app: 'a',
    arrival: 0,
    requestedGpus: 1,
    requestedBatch: 1,
    progressFraction: 0.25,
    statEpoch: 0,
    allocation: [0, 0],
    rescales: 1,
    restartingUntil: null,
    attainedGpuSeconds: 0,
    runSeconds: 0,
    ...over,
  });

  it('predicts the rest of the epoch at the current width, the restart included', () => {
    const clock = new EpochClock([cls]);
    // Half of epoch 0 left (fraction 0.25 of 0.5), 400 s on 1 GPU, speedup 2: 100 s.
    expect(clock.secondsToNextEpoch(job({}), 0)).toBeCloseTo(100, 9);
    // Three GPUs use the widest listed width below (2); a restart until t = 20 adds 20 s.
    expect(clock.secondsToNextEpoch(job({ allocation: [0, 0, 1], restartingUntil: 20 }), 0)).toBeCloseTo(
      120,
      9,
    );
    expect(clock.secondsToNextEpoch(job({ statEpoch: 1, progressFraction: 0.6 }), 0)).toBe(Infinity);
    expect(clock.secondsToNextEpoch(job({ allocation: [] }), 0)).toBe(Infinity);
  });
});
