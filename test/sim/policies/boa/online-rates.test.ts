import { describe, expect, it } from 'vitest';
import { configSchema } from '../../../../src/service/config.ts';
import { plannedRates } from '../../../../src/service/estimators.ts';
import { DEFAULT_RISE, riseOptions } from '../../../../src/service/rate-rise.ts';
import { DEFAULT_ONLINE_RATES, OnlineRates } from '../../../../src/sim/policies/boa/online-rates.ts';
import { BOA_DEFAULTS } from '../../../../src/sim/policies/boa/index.ts';

describe("boa's online rates are the service's", () => {
  it('uses the service configuration defaults: window, prior weight, prior rates, hold, calculator timer', () => {
    const service = configSchema.parse({});
    expect(DEFAULT_ONLINE_RATES.holdHalfLifeHours).toBe(service.rateHoldHalfLifeHours);
    expect(DEFAULT_ONLINE_RATES.windowHours).toBe(service.rateWindowHours);
    expect(DEFAULT_ONLINE_RATES.priorWeightHours).toBe(service.priorWeightHours);
    expect(DEFAULT_ONLINE_RATES.priorRatesPerHour).toEqual(service.priorRates);
    expect(DEFAULT_ONLINE_RATES.confidence).toBe(service.rateConfidence);
    expect(DEFAULT_ONLINE_RATES.firstDayArrivals).toBe(service.firstDayArrivals);
    expect(DEFAULT_ONLINE_RATES.rise).toEqual(riseOptions(service.rateRiseHours, service.rateRiseZ));
    expect(BOA_DEFAULTS.replanSeconds).toBe(service.calculatorMinutes * 60);
    expect(BOA_DEFAULTS.rates).toBe('online');
  });

  it.each([
    [0, 0],
    [2, 0],
    [0, 1.5],
  ])(
    "gives what the service's plannedRates gives for the same submissions, confidence %d, first-day arrivals %d",
    (confidence, firstDayArrivals) => {
      const times = [0, 40, 900, 4000, 9000, 30_000, 90_000, 91_000];
      const apps = ['a', 'b', 'a', 'a', 'b', 'a', 'b', 'a'];
      const rates = new OnlineRates(['a', 'b', 'c'], {
        ...DEFAULT_ONLINE_RATES,
        confidence,
        firstDayArrivals,
      });
      times.forEach((t, i) => rates.record(apps[i] as string, t));
      for (const now of [100, 5000, 20_000, 95_000, 100_000]) {
        const service = plannedRates(
          [
            { name: 'a', priorRatePerHour: 0 },
            { name: 'b', priorRatePerHour: 0 },
            { name: 'c', priorRatePerHour: 0 },
          ],
          times.map((t, i) => ({ className: apps[i] as string, submittedAt: t * 1000 })),
          {
            now: now * 1000,
            windowHours: 24,
            priorWeightHours: 2,
            observedSince: -1,
            holdHalfLifeHours: 48,
            confidence,
            rise: DEFAULT_RISE,
            firstDayArrivals,
          },
        );
        const ours = rates.ratesAt(now);
        for (const [name, rate] of Object.entries(service)) {
          if (rate > 0) expect(ours[name]).toBeCloseTo(rate, 12);
          else expect(ours[name]).toBeUndefined();
        }
      }
    },
  );

  it("with a history, reads it as the service's window holds it: the same as plannedRates on the days before and the trace", () => {
    // Two days of one cifar10 an hour, then the trace starting at t = 1000 s with a bert.
    const history = Array.from({ length: 48 }, (_, k) => ({ app: 'cifar10', secondsBefore: 60 + 3600 * k }));
    const start = 1000;
    const warm = new OnlineRates(['cifar10', 'bert'], {
      ...DEFAULT_ONLINE_RATES,
      history: [...history].reverse(),
    });
    const cold = new OnlineRates(['cifar10', 'bert'], DEFAULT_ONLINE_RATES);
    for (const rates of [warm, cold]) rates.record('bert', start);
    // At the first arrival the warm estimator reads the day before (24 in 24 h, beside the prior's 2 h
    // of nothing); a service starting with the trace has seen no cifar10. Asked first: time only moves
    // forward, and ratesAt forgets what no later estimate reads.
    expect(warm.ratesAt(start).cifar10).toBeCloseTo(24 / 26, 2);
    expect(cold.ratesAt(start).cifar10).toBeUndefined();
    const submissions = [
      ...history.map((h) => ({ className: 'cifar10', submittedAt: (start - h.secondsBefore) * 1000 })),
      { className: 'bert', submittedAt: start * 1000 },
    ].sort((a, b) => a.submittedAt - b.submittedAt);
    for (const now of [start, start + 3600, start + 30 * 3600]) {
      const service = plannedRates(
        [
          { name: 'cifar10', priorRatePerHour: 0 },
          { name: 'bert', priorRatePerHour: 0 },
        ],
        submissions,
        {
          now: now * 1000,
          windowHours: 24,
          priorWeightHours: 2,
          observedSince: (start - 60 - 47 * 3600) * 1000 - 1,
          holdHalfLifeHours: 48,
          confidence: 0,
          rise: DEFAULT_RISE,
        },
      );
      const ours = warm.ratesAt(now);
      for (const [name, rate] of Object.entries(service)) {
        if (rate > 0) expect(ours[name]).toBeCloseTo(rate, 12);
        else expect(ours[name]).toBeUndefined();
      }
    }
  });
});
