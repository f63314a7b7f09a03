import { describe, expect, it } from 'vitest';
import { estimateRates } from '../../src/service/estimators.ts';

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 0, 1);
const RISE = { hours: 2, z: 3, factor: 2, binMinutes: 5, holdHalfLifeHours: 2 };
const CLASSES = [
  { name: 'cifar10', priorRatePerHour: 0 },
  { name: 'bert', priorRatePerHour: 0 },
];
const options = (now: number, rise = true) => ({
  now,
  windowHours: 24,
  priorWeightHours: 2,
  observedSince: T0,
  ...(rise ? { rise: RISE } : {}),
});
/** `perHour` arrivals an hour of `className`, evenly spaced, from `from` hours for `hours` hours. */
const evenly = (className: string, perHour: number, from: number, hours: number) =>
  Array.from({ length: Math.round(perHour * hours) }, (_, i) => ({
    className,
    submittedAt: T0 + (from + (i + 0.5) / perHour) * HOUR,
  }));

describe('rate rise detection', () => {
  it('reads a step up at its new level once the recent hours show it, where the window reads it at a third', () => {
    // A quiet day (2 cifar10 an hour), then 8 an hour for 2 hours.
    const arrivals = [...evenly('cifar10', 2, 0, 24), ...evenly('cifar10', 8, 24, 2)];
    const now = T0 + 26 * HOUR;
    const window = estimateRates(CLASSES, arrivals, options(now, false)).cifar10 as number;
    const risen = estimateRates(CLASSES, arrivals, options(now)).cifar10 as number;
    expect(window).toBeCloseTo((22 * 2 + 16) / 26, 6); // 2.3 an hour
    expect(risen).toBeGreaterThan(7);
    expect(risen).toBeLessThanOrEqual(8 + 1e-9);
  });

  it('changes nothing on a steady load', () => {
    const steady = [...evenly('cifar10', 6, 0, 26), ...evenly('bert', 1, 0, 26)];
    const now = T0 + 26 * HOUR;
    expect(estimateRates(CLASSES, steady, options(now))).toEqual(
      estimateRates(CLASSES, steady, options(now, false)),
    );
  });

  it('waits for a full window: on a first day the estimate is learning the load, not stale', () => {
    // The step of the first test, ten hours into the service's life instead of a day.
    const arrivals = [...evenly('cifar10', 2, 0, 8), ...evenly('cifar10', 8, 8, 2)];
    const young = T0 + 10 * HOUR;
    expect(estimateRates(CLASSES, arrivals, options(young))).toEqual(
      estimateRates(CLASSES, arrivals, options(young, false)),
    );
    // The same arrivals seen by a service that started 14 hours before the first of them.
    const older = { ...options(young), observedSince: T0 - 14 * HOUR };
    expect(estimateRates(CLASSES, arrivals, older).cifar10).toBeGreaterThan(7);
  });

  it('counts a burst of 1000 submissions after a quiet day as a few arrivals an hour, not 500', () => {
    const burst = Array.from({ length: 1000 }, () => ({ className: 'bert', submittedAt: T0 + 25 * HOUR }));
    const arrivals = [...evenly('cifar10', 2, 0, 26), ...burst];
    const rates = estimateRates(CLASSES, arrivals, options(T0 + 26 * HOUR));
    const total = (rates.cifar10 as number) + (rates.bert as number);
    expect(total).toBeLessThan(10);
  });

  it("splits the recent level half by the recent mix, half by the window's, no class below its window estimate", () => {
    // A day of cifar10 at 3 an hour, then 2 hours of 3 cifar10 and 9 bert an hour.
    const arrivals = [...evenly('cifar10', 3, 0, 26), ...evenly('bert', 9, 24, 2)];
    const now = T0 + 26 * HOUR;
    const window = estimateRates(CLASSES, arrivals, options(now, false));
    const rates = estimateRates(CLASSES, arrivals, options(now));
    const total = (rates.cifar10 as number) + (rates.bert as number);
    // The level is 12 an hour; the window read 3.5.
    expect((window.cifar10 as number) + (window.bert as number)).toBeLessThan(4);
    expect(total).toBeGreaterThan(10);
    expect(total).toBeLessThan(13);
    // bert is 3/4 of the recent arrivals and under 1/5 of the window's: about half the level.
    expect(rates.bert).toBeGreaterThan(4.5);
    expect(rates.bert).toBeLessThan(6.5);
    expect(rates.cifar10).toBeGreaterThan(window.cifar10 as number);
  });

  it('splits the level by a mix in which a burst is a few arrivals too, not its thousand', () => {
    // The step of the test above (bert from 0 to 9 an hour beside cifar10 at 3), and a burst of 1000
    // cifar10 submissions at one instant of the recent hours.
    const step = [...evenly('cifar10', 3, 0, 26), ...evenly('bert', 9, 24, 2)];
    const burst = Array.from({ length: 1000 }, () => ({ className: 'cifar10', submittedAt: T0 + 25 * HOUR }));
    const now = T0 + 26 * HOUR;
    const without = estimateRates(CLASSES, step, options(now));
    const rates = estimateRates(CLASSES, [...step, ...burst], options(now));
    // bert is what rose: the burst must not take its share of the level and give it to cifar10.
    expect(rates.bert).toBeGreaterThan(0.8 * (without.bert as number));
    expect(rates.cifar10).toBeLessThan(1.5 * (without.cifar10 as number));
  });
});
