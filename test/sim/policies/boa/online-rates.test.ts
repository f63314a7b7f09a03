import { describe, expect, it } from 'vitest';
import { configSchema } from '../../../../src/service/config.ts';
import { plannedRates } from '../../../../src/service/estimators.ts';
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
    expect(BOA_DEFAULTS.replanSeconds).toBe(service.calculatorMinutes * 60);
    expect(BOA_DEFAULTS.rates).toBe('online');
  });

  it.each([0, 2])(
    "gives what the service's plannedRates gives for the same submissions, confidence %d",
    (confidence) => {
      const times = [0, 40, 900, 4000, 9000, 30_000, 90_000, 91_000];
      const apps = ['a', 'b', 'a', 'a', 'b', 'a', 'b', 'a'];
      const rates = new OnlineRates(['a', 'b'], { ...DEFAULT_ONLINE_RATES, confidence });
      times.forEach((t, i) => rates.record(apps[i] as string, t));
      for (const now of [100, 5000, 20_000, 95_000, 100_000]) {
        const service = plannedRates(
          [
            { name: 'a', priorRatePerHour: 0 },
            { name: 'b', priorRatePerHour: 0 },
          ],
          times.map((t, i) => ({ className: apps[i] as string, submittedAt: t * 1000 })),
          {
            now: now * 1000,
            windowHours: 24,
            priorWeightHours: 2,
            observedSince: -1,
            holdHalfLifeHours: 48,
            confidence,
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
});
