/**
 * The rates the plan is made for (estimators.ts plannedRates): a rise in a class's estimate is planned
 * for at once, a fall at most halving every `holdHalfLifeHours`, and nothing older than the window.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { estimateRates, type PastEstimate, plannedRates } from '../../src/service/estimators.ts';
import { DEFAULT_RISE } from '../../src/service/rate-rise.ts';
import { startService } from './harness.ts';

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 0, 1);
const classes = [{ name: 'bert', priorRatePerHour: 0 }];
const window = { windowHours: 24, priorWeightHours: 2, observedSince: T0 };

/** `perHour` bert submissions an hour, evenly, from T0 for `hours`. */
function steady(perHour: number, hours: number) {
  return Array.from({ length: perHour * hours }, (_, i) => ({
    className: 'bert',
    submittedAt: T0 + ((i + 0.5) * HOUR) / perHour,
  }));
}

const estimate = (submissions: ReturnType<typeof steady>, now: number) =>
  estimateRates(classes, submissions, { now, ...window }).bert as number;
const planned = (submissions: ReturnType<typeof steady>, now: number, holdHalfLifeHours = 48) =>
  plannedRates(classes, submissions, { now, ...window, holdHalfLifeHours }).bert as number;

describe('the rates a plan is made for', () => {
  it('are the estimate itself with no hold', () => {
    const arrivals = steady(10, 8);
    for (const hours of [1, 8, 12, 30]) {
      expect(planned(arrivals, T0 + hours * HOUR, 0)).toBe(estimate(arrivals, T0 + hours * HOUR));
    }
  });

  it('follow a rising estimate at once', () => {
    const arrivals = steady(10, 8);
    const now = T0 + 7.99 * HOUR;
    // The estimate only rises while arrivals go on, so its highest point is the last arrival, minutes ago.
    const latest = arrivals.at(-1)?.submittedAt as number;
    expect(planned(arrivals, now)).toBeCloseTo(
      estimate(arrivals, latest) * 0.5 ** ((now - latest) / HOUR / 48),
      9,
    );
    expect(planned(arrivals, now) / estimate(arrivals, now)).toBeLessThan(1.01);
  });

  it('follow a fall at most halving every holdHalfLifeHours, while the estimate falls faster', () => {
    const arrivals = steady(10, 8);
    const latest = arrivals.at(-1)?.submittedAt as number;
    const peak = estimate(arrivals, latest);
    for (const hours of [2, 6, 12, 20]) {
      const now = latest + hours * HOUR;
      const held = planned(arrivals, now);
      expect(held).toBeGreaterThanOrEqual(peak * 0.5 ** (hours / 48) * (1 - 1e-12));
      // A short hold meets the estimate itself as it falls.
      const fast = Math.max(estimate(arrivals, now), peak * 0.5 ** (hours / 6));
      expect(planned(arrivals, now, 6)).toBeCloseTo(fast, 9);
      expect(estimate(arrivals, now)).toBeLessThan(held * 0.95);
    }
  });

  it('forget estimates older than the window', () => {
    const arrivals = steady(10, 8);
    const now = T0 + 33 * HOUR;
    expect(planned(arrivals, now)).toBe(estimate(arrivals, now));
  });

  it('hold nothing from the first priorWeightHours, where the estimate is mostly the prior', () => {
    const withPrior = [{ name: 'bert', priorRatePerHour: 20 }];
    const arrivals = steady(2, 8);
    const options = (now: number) => ({ now, ...window, holdHalfLifeHours: 48 });
    // A prior 10 times the arrivals: the estimate starts at 20 and falls towards 2 as hours are seen.
    const now = T0 + 8 * HOUR;
    const estimateNow = estimateRates(withPrior, arrivals, options(now)).bert as number;
    const atTwoHours = estimateRates(withPrior, arrivals, options(T0 + 2.25 * HOUR)).bert as number;
    const held = plannedRates(withPrior, arrivals, options(now)).bert as number;
    expect(held).toBeLessThanOrEqual(atTwoHours * (1 + 1e-12));
    expect(held).toBeGreaterThan(estimateNow);
    // The estimate at the first arrival, 15 minutes in, read about 18 (the prior); it is not held.
    expect(estimateRates(withPrior, arrivals, options(T0 + 0.25 * HOUR)).bert).toBeGreaterThan(17);
  });

  it('are the same with estimates kept between calls as without', () => {
    const arrivals = [
      ...steady(6, 10),
      ...steady(2, 30).map((s) => ({ ...s, submittedAt: s.submittedAt + 10 * HOUR })),
    ];
    const memo = new Map<number, PastEstimate>();
    for (let hours = 0.5; hours <= 48; hours += 0.75) {
      const now = T0 + hours * HOUR;
      const options = { now, ...window, holdHalfLifeHours: 12 };
      const seen = arrivals.filter((s) => s.submittedAt <= now);
      expect(plannedRates(classes, seen, options, memo)).toEqual(plannedRates(classes, seen, options));
    }
    // Only estimates of the last window are kept.
    expect(Math.min(...memo.keys())).toBeGreaterThan(T0 + 24 * HOUR);
  });

  it('are the same read a few minutes apart, with rise detection, as read afresh', () => {
    // Read every 5 minutes, each read finds at most two estimates not kept (now and the latest
    // submission): those are counted by a pass, a fresh read's through the index (estimators.ts).
    const twoClasses = [...classes, { name: 'cifar10', priorRatePerHour: 3 }];
    const arrivals = [
      ...steady(4, 30),
      ...steady(12, 2).map((s) => ({ className: 'cifar10', submittedAt: s.submittedAt + 26 * HOUR })),
    ];
    const memo = new Map<number, PastEstimate>();
    for (let minutes = 5; minutes <= 30 * 60; minutes += 5) {
      const now = T0 + minutes * 60_000;
      const options = { now, ...window, holdHalfLifeHours: 12, rise: DEFAULT_RISE };
      const seen = arrivals.filter((s) => s.submittedAt <= now);
      expect(plannedRates(twoClasses, seen, options, memo)).toEqual(plannedRates(twoClasses, seen, options));
    }
  });

  it('hold a risen level seen at a past submission, halving every rise.holdHalfLifeHours', () => {
    // A steady 2 an hour for 30 hours, and 20 more in hour 28: a rise while it lasts. 3.5 hours
    // later the last 2 hours hold no rise, and what is planned is the risen level at the burst, aged.
    const burst = Array.from({ length: 20 }, (_, i) => ({
      className: 'bert',
      submittedAt: T0 + 28 * HOUR + ((i + 0.5) * HOUR) / 20,
    }));
    const arrivals = [...steady(2, 30), ...burst].filter((s) => s.submittedAt <= T0 + 31.5 * HOUR);
    const at = (holdHalfLifeHours: number) =>
      plannedRates(classes, arrivals, {
        now: T0 + 31.5 * HOUR,
        ...window,
        holdHalfLifeHours: 48,
        rise: { ...DEFAULT_RISE, holdHalfLifeHours },
      }).bert as number;
    const windowOnly = at(1e-6);
    expect(at(DEFAULT_RISE.holdHalfLifeHours)).toBeGreaterThan(1.5 * windowOnly);
    // Held longer, the same risen level weighs more.
    expect(at(8)).toBeGreaterThan(at(DEFAULT_RISE.holdHalfLifeHours));
  });

  it('do not keep the estimate at the latest submission, where more may still come', () => {
    const memo = new Map<number, PastEstimate>();
    const at = T0 + 3 * HOUR;
    const first = [...steady(2, 3), { className: 'bert', submittedAt: at }];
    const options = { now: at, ...window, holdHalfLifeHours: 48 };
    plannedRates(classes, first, options, memo);
    expect(memo.has(at)).toBe(false);
    // A second submission in the same millisecond counts.
    const second = [...first, { className: 'bert', submittedAt: at }];
    expect(plannedRates(classes, second, options, memo)).toEqual(plannedRates(classes, second, options));
    expect(plannedRates(classes, second, options).bert).toBeGreaterThan(
      plannedRates(classes, first, options).bert as number,
    );
  });
});

describe("the service's planned rates", () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const fn of cleanups.splice(0)) await fn();
  });

  async function afterArrivals(config: Record<string, unknown>) {
    const s = await startService({ config });
    cleanups.push(s.close);
    for (let i = 0; i < 12; i++) {
      s.clock.advance(600);
      expect((await s.request('POST', '/v1/jobs', { class: 'bert' })).status).toBe(201);
    }
    s.clock.advance(10 * 3600);
    return s.service.estimatedRates().bert as number;
  }

  it('hold a fall by default (rateHoldHalfLifeHours 48) and follow it with 0', async () => {
    const held = await afterArrivals({});
    const followed = await afterArrivals({ rateHoldHalfLifeHours: 0 });
    // 12 arrivals in 2 hours: at the last, 12 / 4 h with the prior's 2 h; 10 hours later 12 / 14 h.
    expect(followed).toBeCloseTo(12 / 14, 6);
    expect(held).toBeCloseTo((12 / 4) * 0.5 ** (10 / 48), 6);
  });

  it('follow a step up after a quiet day within the rise hours (rateRiseHours 2), and not with 0', async () => {
    async function afterQuietDay(config: Record<string, unknown>) {
      const s = await startService({ config });
      cleanups.push(s.close);
      const submit = async (count: number, everySeconds: number) => {
        for (let i = 0; i < count; i++) {
          s.clock.advance(everySeconds);
          expect((await s.request('POST', '/v1/jobs', { class: 'bert' })).status).toBe(201);
        }
      };
      await submit(24, 3600); // a day at 1 an hour
      await submit(16, 450); // then 2 hours at 8 an hour
      return s.service.estimatedRates().bert as number;
    }
    const risen = await afterQuietDay({});
    const windowOnly = await afterQuietDay({ rateRiseHours: 0 });
    // The window alone: (22 + 16) arrivals over its 24 h and the prior's 2.
    expect(windowOnly).toBeLessThan(2);
    expect(risen).toBeGreaterThan(6);
    expect(risen).toBeLessThanOrEqual(8 + 1e-9);
  });

  it('refuses rateHoldHalfLifeHours below 0, naming the setting', async () => {
    await expect(startService({ config: { rateHoldHalfLifeHours: -1 } })).rejects.toThrow(
      /rateHoldHalfLifeHours must be >= 0 \(0: no hold\)/,
    );
  });
});

describe('planned rates after a burst, minute by minute', () => {
  it('do not flip with the minute they are read: a burst stays in its bins as time passes', () => {
    // Two days of one cifar10 and one bert job every 2 hours, then 60 cifar10 jobs 4 s apart.
    const both = [
      { name: 'cifar10', priorRatePerHour: 0 },
      { name: 'bert', priorRatePerHour: 0 },
    ];
    const submissions: Array<{ className: string; submittedAt: number }> = [];
    for (let t = T0 + HOUR; t < T0 + 48 * HOUR; t += 2 * HOUR) {
      submissions.push(
        { className: 'cifar10', submittedAt: t },
        { className: 'bert', submittedAt: t + 60_000 },
      );
    }
    // The burst straddles a 5-minute edge of the grid: 2 minutes before it to 2 minutes after.
    const burstStart = T0 + 48 * HOUR + 3 * 60_000;
    for (let i = 0; i < 60; i++)
      submissions.push({ className: 'cifar10', submittedAt: burstStart + i * 4000 });
    const end = burstStart + 59 * 4000;
    const at = (minutes: number) =>
      plannedRates(both, submissions, {
        now: end + minutes * 60_000,
        windowHours: 24,
        priorWeightHours: 2,
        observedSince: T0,
        holdHalfLifeHours: 2,
        rise: DEFAULT_RISE,
      }).cifar10 as number;
    // Read every minute of the next hour: the estimate may fall as the hold decays, never jump back up
    // by more than a hair (a partial bin's hours grow with the clock).
    let previous = at(1);
    for (let minute = 2; minute <= 60; minute++) {
      const now = at(minute);
      expect(now, `minute ${minute}`).toBeLessThanOrEqual(previous * 1.05);
      previous = now;
    }
  });
});
