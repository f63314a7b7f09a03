/**
 * The opt-in confidence bound on arrival rates (estimators.ts, `rateConfidence`): the load is planned
 * at 1 + z / sqrt(n) times its estimate, n the arrivals the estimates stand for, so a load seen over few
 * hours is planned as possibly heavier than it looked, and the bound closes on the estimate as
 * arrivals accumulate.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { estimateRates, plannedRates } from '../../src/service/estimators.ts';
import { startService } from './harness.ts';

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 0, 1);
const window = { windowHours: 24, priorWeightHours: 2, observedSince: T0 };

const steady = (perHour: number, hours: number) =>
  Array.from({ length: perHour * hours }, (_, i) => ({
    className: 'bert',
    submittedAt: T0 + ((i + 0.5) * HOUR) / perHour,
  }));

const bert = [{ name: 'bert', priorRatePerHour: 0 }];
const estimate = (hours: number, confidence?: number, perHour = 6) =>
  estimateRates(bert, steady(perHour, hours), { now: T0 + hours * HOUR, ...window, confidence })
    .bert as number;

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

describe('the confidence bound on arrival rates', () => {
  it('is z standard errors of a Poisson count above the estimate', () => {
    for (const hours of [1, 4, 12]) {
      const rate = estimate(hours);
      expect(estimate(hours, 0)).toBe(rate);
      // The arrivals the estimate stands for: over the prior's 2 hours and the hours seen.
      expect(estimate(hours, 2)).toBeCloseTo(rate * (1 + 2 / Math.sqrt(rate * (hours + 2))), 9);
    }
  });

  it('raises every class by one factor, from the arrivals of all of them', () => {
    const rare = { className: 'imagenet', submittedAt: T0 + 0.5 * HOUR };
    const both = [...bert, { name: 'imagenet', priorRatePerHour: 0 }];
    const at = { now: T0 + 3 * HOUR, ...window };
    const plain = estimateRates(both, [...steady(6, 3), rare], at);
    const bounded = estimateRates(both, [...steady(6, 3), rare], { ...at, confidence: 2 });
    const factor = 1 + 2 / Math.sqrt(((plain.bert as number) + (plain.imagenet as number)) * 5);
    expect(bounded.bert).toBeCloseTo((plain.bert as number) * factor, 9);
    // One imagenet job is not planned as a class of its own uncertainty (that would be 1 + 2 / sqrt(1)).
    expect(bounded.imagenet).toBeCloseTo((plain.imagenet as number) * factor, 9);
    expect(factor).toBeLessThan(1.5);
  });

  it('closes on the estimate as hours of arrivals accumulate', () => {
    const excess = (hours: number) => estimate(hours, 2) / estimate(hours) - 1;
    expect(excess(1)).toBeGreaterThan(0.5);
    expect(excess(4)).toBeLessThan(excess(1));
    expect(excess(20)).toBeLessThan(excess(4));
    expect(excess(20)).toBeLessThan(0.2);
  });

  it('leaves a class not seen at 0, and a burst still counts as a few arrivals', () => {
    const rates = estimateRates([...bert, { name: 'ncf', priorRatePerHour: 0 }], steady(6, 3), {
      now: T0 + 3 * HOUR,
      ...window,
      confidence: 2,
    });
    expect(rates.ncf).toBe(0);
    const burst = Array.from({ length: 1000 }, () => ({ className: 'bert', submittedAt: T0 + 60_000 }));
    const after = estimateRates(bert, burst, { now: T0 + 120_000, ...window, confidence: 2 }).bert as number;
    expect(after).toBeLessThan(10);
  });

  it('is what the plan holds: plannedRates bounds the estimates it reads', () => {
    const arrivals = steady(6, 8);
    const now = T0 + 8 * HOUR;
    const held = (confidence?: number) =>
      plannedRates(bert, arrivals, { now, ...window, holdHalfLifeHours: 48, confidence }).bert as number;
    expect(held(2)).toBeGreaterThan(held() * 1.2);
    expect(held(2)).toBeGreaterThanOrEqual(estimate(8, 2) - 1e-9);
  });
});

describe('rateConfidence in the service', () => {
  async function ratesAndNeeds(config: Record<string, unknown>) {
    const s = await startService({ config: { priorRates: { cifar10: 8, bert: 1 }, ...config } });
    cleanups.push(s.close);
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 400 })).status).toBe(200);
    await s.service.planner.idle();
    const control = (await s.request('GET', '/v1/budget')).body.control;
    return { rates: s.service.estimatedRates(), needs: control.loadNeedsGpuHoursPerHour as number };
  }

  it('plans the priors at their bound over the prior hours, and the load needs more; off by default', async () => {
    const plain = await ratesAndNeeds({});
    expect(plain.rates).toMatchObject({ cifar10: 8, bert: 1, imagenet: 0 });
    const bounded = await ratesAndNeeds({ rateConfidence: 2 });
    // Nothing seen yet: the load is the prior's 2 hours, 18 arrivals.
    const factor = 1 + 2 / Math.sqrt(18);
    expect(bounded.rates.cifar10).toBeCloseTo(8 * factor, 6);
    expect(bounded.rates.bert).toBeCloseTo(1 * factor, 6);
    expect(bounded.rates.imagenet).toBe(0);
    expect(bounded.needs).toBeGreaterThan(plain.needs * 1.3);
  });

  it('refuses a bound outside 0-4 standard errors, naming the setting', async () => {
    for (const rateConfidence of [-1, 5]) {
      await expect(startService({ config: { rateConfidence } })).rejects.toThrow(
        /rateConfidence must be between 0 \(the estimate\) and 4 standard errors/,
      );
    }
  });
});
