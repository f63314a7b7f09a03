import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { estimateRates, plannedRates } from '../../src/service/estimators.ts';
import { DEFAULT_ONLINE_RATES, OnlineRates } from '../../src/sim/policies/boa/online-rates.ts';
import { IMPOSSIBLE_FACTOR, judgeWorkSample } from '../../src/service/trust.ts';
import { startService } from './harness.ts';

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 0, 1);
const options = (now: number) => ({ now, windowHours: 24, priorWeightHours: 2, observedSince: T0 });

describe('arrival rates under bursts', () => {
  it('counts a burst of 1000 submissions as a few arrivals, not 1000 per window', () => {
    const burst = Array.from({ length: 1000 }, () => ({ className: 'cifar10', submittedAt: T0 + 60_000 }));
    const rates = estimateRates([{ name: 'cifar10', priorRatePerHour: 2 }], burst, options(T0 + 120_000));
    // The plain estimate would be 1000 / 2.03 h, about 490 per hour.
    expect(rates.cifar10).toBeLessThan(5);
    expect(rates.cifar10).toBeGreaterThan(2);
  });

  it('follows a sustained change of rate within a few hours', () => {
    const steady = Array.from({ length: 120 }, (_, i) => ({
      className: 'bert',
      submittedAt: T0 + (i + 0.5) * (HOUR / 10),
    }));
    const rates = estimateRates([{ name: 'bert', priorRatePerHour: 1 }], steady, options(T0 + 12 * HOUR));
    // 10 per hour for 12 hours against a prior of 1 worth 2 hours: (2 + 120) / 14.
    expect(rates.bert).toBeCloseTo(122 / 14, 1);
  });

  it('matches the plain windowed estimate on Poisson-like arrivals', () => {
    const arrivals = [0.1, 0.5, 1.2, 1.3, 2.7, 3.1, 3.2, 3.9, 5.5, 5.6].map((h) => ({
      className: 'ncf',
      submittedAt: T0 + h * HOUR,
    }));
    const rates = estimateRates([{ name: 'ncf', priorRatePerHour: 2 }], arrivals, options(T0 + 6 * HOUR));
    expect(rates.ncf).toBeCloseTo((2 * 2 + 10) / 8, 6);
  });
});

describe('arrival rates without a prior weight', () => {
  const noPrior = (now: number) => ({ ...options(now), priorWeightHours: 0 });
  const cifar10 = [{ name: 'cifar10', priorRatePerHour: 0 }];

  it('reads one arrival a minute after the start as one arrival, not 60 an hour', () => {
    const one = [{ className: 'cifar10', submittedAt: T0 + 60_000 }];
    expect(estimateRates(cifar10, one, noPrior(T0 + 60_000)).cifar10).toBeLessThanOrEqual(1);
    // The plan holds the highest estimate of the window: a blown-up first one would last the day.
    const held = plannedRates(cifar10, one, { ...noPrior(T0 + 12 * HOUR), holdHalfLifeHours: 48 });
    expect(held.cifar10).toBeLessThanOrEqual(1);
  });

  it('counts a burst in the first minutes as a few arrivals, as it does with a prior', () => {
    const burst = Array.from({ length: 1000 }, () => ({ className: 'cifar10', submittedAt: T0 + 60_000 }));
    expect(estimateRates(cifar10, burst, noPrior(T0 + 120_000)).cifar10).toBeLessThan(5);
  });

  it("in the simulator's online rates too, the service's code", () => {
    const online = new OnlineRates(['cifar10'], { ...DEFAULT_ONLINE_RATES, priorWeightHours: 0 });
    online.record('cifar10', 1000);
    expect(online.ratesAt(1000 + 600).cifar10).toBeLessThanOrEqual(1);
  });
});

describe('trust in reported work', () => {
  it('drops samples impossible for the class and bounds the influence of the rest', () => {
    expect(judgeWorkSample(480, 480 / IMPOSSIBLE_FACTOR - 1)).toMatchObject({ use: false });
    expect(judgeWorkSample(480, 200)).toEqual({ use: true, workSeconds: 240, clamped: true });
    expect(judgeWorkSample(480, 5000)).toEqual({ use: true, workSeconds: 960, clamped: true });
    expect(judgeWorkSample(480, 500)).toEqual({ use: true, workSeconds: 500, clamped: false });
  });

  it('keeps a class estimate when a fake job reports epochs impossibly fast', async () => {
    const lines: Array<{ level: number; event?: string }> = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const s = await startService({ config: { priorRates: { cifar10: 4 }, budget: 20 }, logger });
    try {
      await s.service.planner.idle();
      const { job } = s.service.registerJob('cifar10', 'fake');
      await s.ticks(5); // a plan, then nodes boot in 90 s
      expect(s.service.state.jobs.get(job.id)?.state).toBe('running');
      const before = s.service.estimatedClasses().find((c) => c.name === 'cifar10')!.epochs;
      // Every epoch "done" 5 s apart: tens of times faster than the profile allows.
      for (let e = 1; e < before.length; e++) {
        s.clock.advance(5);
        s.service.reportProgress(job.id, e);
      }
      const after = s.service.estimatedClasses().find((c) => c.name === 'cifar10')!.epochs;
      // Epoch 0 really ran (minutes at its width): a plausible sample, whose influence is bounded.
      expect(after[0]!.workSeconds).toBeGreaterThanOrEqual(before[0]!.workSeconds * (1 - 1 / 8) - 1e-9);
      expect(after[0]!.workSeconds).toBeLessThanOrEqual(before[0]!.workSeconds * 1.25 + 1e-9);
      // The epochs "done" in 5 s are impossible for cifar10: dropped, the estimates unchanged.
      expect(after.slice(1).map((e) => e.workSeconds)).toEqual(before.slice(1).map((e) => e.workSeconds));
      // Each drop is logged, at warn only the job's first: the rest would fill the log.
      const dropped = lines.filter((l) => l.event === 'work_sample_dropped');
      expect(dropped.length).toBeGreaterThanOrEqual(before.length - 2);
      expect(dropped.map((l) => l.level)).toEqual([40, ...dropped.slice(1).map(() => 20)]);
    } finally {
      await s.close();
    }
  });
});
