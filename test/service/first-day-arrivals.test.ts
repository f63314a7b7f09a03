/**
 * The opt-in first-day arrivals (estimators.ts withFirstDayArrivals, `firstDayArrivals`): until the
 * rate window is full, every class is planned as if that many more of its jobs had arrived in the hours
 * observed, so a class not seen yet (on a first day, the rare heavy ones) is not planned at 0.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { plannedRates } from '../../src/service/estimators.ts';
import { startService } from './harness.ts';

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 0, 1);
const classes = [
  { name: 'cifar10', priorRatePerHour: 0 },
  { name: 'imagenet', priorRatePerHour: 0 },
];
// Four cifar10 jobs an hour for two days; imagenet never.
const submissions = Array.from({ length: 4 * 48 }, (_, i) => ({
  className: 'cifar10',
  submittedAt: T0 + ((i + 0.5) * HOUR) / 4,
}));
const options = { windowHours: 24, priorWeightHours: 2, observedSince: T0, holdHalfLifeHours: 48 };
const planned = (hours: number, firstDayArrivals?: number) =>
  plannedRates(classes, submissions, { ...options, now: T0 + hours * HOUR, firstDayArrivals });

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

describe('first-day arrivals', () => {
  it('adds that many arrivals over the hours observed and the prior to every class, seen or not', () => {
    for (const hours of [0.5, 3, 10, 23.9]) {
      const plain = planned(hours);
      const added = planned(hours, 1.5);
      expect(plain.imagenet).toBe(0);
      expect(added.imagenet).toBeCloseTo(1.5 / (2 + hours), 12);
      expect(added.cifar10).toBeCloseTo((plain.cifar10 as number) + 1.5 / (2 + hours), 12);
    }
  });

  it('falls as hours pass and ends once the window is full: a day without imagenet is evidence', () => {
    const imagenet = [1, 6, 12, 23].map((hours) => planned(hours, 1).imagenet as number);
    for (let i = 1; i < imagenet.length; i++) expect(imagenet[i]).toBeLessThan(imagenet[i - 1] as number);
    for (const hours of [24, 30, 47]) expect(planned(hours, 1)).toEqual(planned(hours));
  });

  it('leaves a class with a configured prior to it: the operator said what to expect of it', () => {
    const withPrior = [classes[0] as (typeof classes)[number], { name: 'imagenet', priorRatePerHour: 0.01 }];
    const at = { ...options, now: T0 + 3 * HOUR };
    const plain = plannedRates(withPrior, submissions, at);
    const added = plannedRates(withPrior, submissions, { ...at, firstDayArrivals: 2 });
    expect(added.imagenet).toBe(plain.imagenet);
    expect(added.cifar10).toBeCloseTo((plain.cifar10 as number) + 2 / 5, 12);
  });

  it('changes nothing at 0 or absent, and counts at least an hour with no prior weight', () => {
    expect(planned(5, 0)).toEqual(planned(5));
    const early = plannedRates(classes, [], {
      ...options,
      priorWeightHours: 0,
      now: T0 + 0.1 * HOUR,
      firstDayArrivals: 1,
    });
    expect(early.imagenet).toBe(1);
  });
});

describe('firstDayArrivals in the service', () => {
  async function ratesAndNeeds(config: Record<string, unknown>) {
    const s = await startService({ config });
    cleanups.push(s.close);
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 400 })).status).toBe(200);
    await s.service.planner.idle();
    const control = (await s.request('GET', '/v1/budget')).body.control;
    return {
      rates: s.service.estimatedRates(),
      needs: control.loadNeedsGpuHoursPerHour as number,
      added: control.firstDayJobsPerHour as number,
    };
  }

  it('plans every class before any job is seen, and the load needs more; off by default', async () => {
    const plain = await ratesAndNeeds({});
    expect(plain.rates.imagenet).toBe(0);
    expect(plain.added).toBe(0);
    const first = await ratesAndNeeds({ firstDayArrivals: 1 });
    expect(first.added).toBeCloseTo(0.5, 4);
    // Nothing observed yet: one arrival over the prior's 2 hours, for every class the service knows.
    expect(Object.keys(first.rates).sort()).toEqual(Object.keys(plain.rates).sort());
    expect(Object.keys(first.rates).length).toBeGreaterThan(1);
    for (const rate of Object.values(first.rates)) expect(rate).toBeCloseTo(0.5, 6);
    expect(first.needs).toBeGreaterThan(plain.needs);
  });

  it('refuses a number outside 0-10, naming the setting', async () => {
    for (const firstDayArrivals of [-1, 11]) {
      await expect(startService({ config: { firstDayArrivals } })).rejects.toThrow(
        /firstDayArrivals must be between 0 \(none\) and 10 arrivals a class/,
      );
    }
  });
});
