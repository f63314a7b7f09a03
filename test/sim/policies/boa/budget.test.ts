/** The behaviours boa is judged on, on the measured truth: budget held, every job done, exact vs paper. */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseProfileFile } from '../../../../src/core/profile.ts';
import { arrivalRatesPerHour, parseTrace } from '../../../../src/core/trace.ts';
import { jctAtPaid } from '../../../../src/sim/matched.ts';
import { BoaPlanner } from '../../../../src/sim/policies/boa/planner.ts';
import type { TickSnapshot } from '../../../../src/sim/engine/engine.ts';
import type { PolicyOptions } from '../../../../src/sim/policy.ts';
import { simulate, truthProvider } from '../../../../src/sim/run.ts';
import { generateTrace } from '../../../../src/sim/trace-gen/generate.ts';
import { NEW_TRACE_MIX } from '../../../../scripts/lib/mixes.ts';
import { POLLUX, REPO } from '../../../helpers/run-script.ts';

const profiles = parseProfileFile(JSON.parse(readFileSync(resolve(REPO, 'data/profiles.json'), 'utf8')));
const truthOf = truthProvider(POLLUX);

describe('boa on workload-1 (cifar10, bert, deepspeech2: 85 jobs) at budget 40', () => {
  const trace = parseTrace(readFileSync(resolve(POLLUX, 'workloads/workload-1.csv'), 'utf8'));
  const run = (solver: 'exact' | 'paper', budget = 40) =>
    simulate({
      trace,
      apps: ['cifar10', 'bert', 'deepspeech2'],
      policy: 'boa',
      options: { budget, solver },
      profiles,
      truthOf,
    }).result;
  const exact = run('exact');
  const paper = run('paper');

  it('finishes every job and holds its own running average near the budget', () => {
    expect(exact.completed).toBe(85);
    // On the yardstick (over the 8-hour arrival span) the drain after the last arrival is counted in:
    // measured +4.1% over 40; over the run's own span -3.5% (the spend ceiling clips the bursts and the
    // control does not bank what it left unspent), just outside the issue's -3% (the opt-in fill
    // below brings it in).
    expect(exact.paidGpuHoursPerHour / 40 - 1).toBeLessThan(0.08);
    const ownSpan = (exact.paidGpuHoursPerHour * exact.arrivalSpanHours) / exact.spanHours;
    expect(ownSpan / 40 - 1).toBeLessThan(0.01);
    expect(ownSpan / 40 - 1).toBeGreaterThan(-0.05);
    expect(exact.allocatedGpuHoursPerHour).toBeLessThan(exact.paidGpuHoursPerHour);
  });

  it('with the opt-in fill below the band, pays within 2.5% of the budget over its own span, no slower', () => {
    const filled = simulate({
      trace,
      apps: ['cifar10', 'bert', 'deepspeech2'],
      policy: 'boa',
      options: { budget: 40, fillBelowBand: 0.015 },
      profiles,
      truthOf,
    }).result;
    const ownSpan = (r: typeof exact) => (r.paidGpuHoursPerHour * r.arrivalSpanHours) / r.spanHours / 40 - 1;
    // Measured: -3.5% without, -2.1% with, average JCT 1164 s both (-3.6% and -1.5%, 1192 s and 1191 s,
    // before the queue for the budget served the least work left first).
    expect(ownSpan(exact)).toBeLessThan(-0.03);
    expect(ownSpan(filled)).toBeGreaterThan(-0.025);
    expect(ownSpan(filled)).toBeLessThan(0.01);
    expect(filled.avgJctSeconds).toBeLessThanOrEqual(exact.avgJctSeconds * 1.01);
  });

  it('is no slower with the exact calculator than with the paper one, at the same paid spend', () => {
    expect(paper.completed).toBe(85);
    // The exact plan is never worse on the model (test/core/calc). One run each at the same budget pays
    // differently (measured: exact 1402 s at paid 42.05, paper 1310 s at 41.55), so both are compared
    // at a paid 40, interpolated from runs at 36, 38 and 40 (measured: exact 1386 s, paper 1426 s);
    // the 5% allows for a run's noise.
    const at40 = (solver: 'exact' | 'paper') =>
      jctAtPaid(
        [36, 38, 40].map((b) => run(solver, b)),
        40,
      );
    expect(at40('exact')).toBeLessThanOrEqual((at40('paper') as number) * 1.05);
  });
});

describe('boa on a generated 960-job, 48-hour newTrace-mix trace (SCV 2.65)', () => {
  const trace = generateTrace({ jobs: 960, hours: 48, mix: NEW_TRACE_MIX, scv: 2.65, seed: 1 });
  const minimum = new BoaPlanner(profiles, 'exact', 1).minFeasible(arrivalRatesPerHour(trace));
  const runBoa = (options: PolicyOptions) =>
    simulate({ trace, policy: 'boa', options, profiles, truthOf }).result;
  /** Paid over the run's own span, first arrival to last completion. */
  const ownSpan = (r: ReturnType<typeof runBoa>) =>
    (r.paidGpuHoursPerHour * r.arrivalSpanHours) / r.spanHours;

  // Online rates and the service's control (the default since 2026-11-29; the plan cap since
  // 2026-11-30). On the yardstick, over the 48-hour arrival span, the drain after the last arrival is
  // paid too: measured +17.2% at 1.2x, +8.8% at 1.5x, +0.8% at 2x, -3.8% at 2.5x, -6.9% at 3x (without
  // the cap: +17.5%, +9.6%, +3.3%, +1.1%, +0.2%; the cap keeps a generous budget from plans for the few
  // jobs seen early, and on this trace their load never grows into it). An unspent budget is not banked,
  // so over the run's own span boa pays at most the budget.
  it.each([
    [1.2, 0.19, -0.03],
    [1.5, 0.12, -0.03],
    [2, 0.06, -0.03],
    [2.5, 0.03, -0.05],
    [3, 0.02, -0.08],
  ])(
    'at %sx the minimum, pays at most %s over the budget on the yardstick (at least %s), no more over its own span',
    (factor, over, under) => {
      const budget = factor * minimum;
      const result = runBoa({ budget });
      expect(result.completed).toBe(960);
      expect(result.paidGpuHoursPerHour / budget - 1).toBeLessThan(over);
      expect(result.paidGpuHoursPerHour / budget - 1).toBeGreaterThan(under);
      expect(ownSpan(result) / budget - 1).toBeLessThan(0.01);
      // The budget window (24 h): the engine's bill in the heaviest day, measured +0.42% to +0.43%
      // (the ceiling's slack x horizon / window, 0.42%); 2.2% to 3.2% over while the ceiling let the
      // hour about to leave a full window lend its credit (docs/budget.md, "the spend ceiling").
      expect(result.peakDayPaidGpuHoursPerHour / budget - 1).toBeLessThan(0.005);
    },
  );

  it('spends the budget on the drain after the last arrival, where the fixed widths left it idle', () => {
    // At 1.2x the last imagenet jobs ran for 23 hours after the arrivals ended, most of it on 1-3 GPUs
    // (measured without the drain: -19.9% over the run's own span, 69.2 hours, average
    // JCT 4704 s; with it: -4.8%, 58.6 hours, 4508 s; with the demand ratio, -23.1% and -7.1%).
    // Without the credit for a tight budget (below), which spends some of the same budget sooner.
    const budget = 1.2 * minimum;
    const drained = runBoa({ budget, creditSpendHours: 0 });
    const idle = runBoa({ budget, creditSpendHours: 0, drainAfterHours: 0 });
    expect(ownSpan(idle) / budget - 1).toBeLessThan(-0.18);
    expect(ownSpan(drained) / budget - 1).toBeGreaterThan(-0.1);
    expect(ownSpan(drained) / budget - 1).toBeLessThan(0.01);
    expect(drained.spanHours).toBeLessThan(idle.spanHours - 8);
    expect(drained.avgJctSeconds).toBeLessThan(idle.avgJctSeconds);
  });

  it('at 1.2x, spends the credit of quiet hours while the load is tight: in the band and faster', () => {
    // Measured 2026-11-29 (the service's control): over the run's own span -4.8% -> -1.6%, average JCT
    // 4508 -> 4064 s, p95 14408 -> 9491 s (with the demand ratio: -7.1% -> -2.0%, 4604 -> 3704 s):
    // without it, what quiet hours left unspent reached the jobs only as the ceiling's room for peaks
    // while they queued behind it.
    const budget = 1.2 * minimum;
    const credited = runBoa({ budget });
    const without = runBoa({ budget, creditSpendHours: 0 });
    expect(ownSpan(without) / budget - 1).toBeLessThan(-0.04);
    expect(ownSpan(credited) / budget - 1).toBeGreaterThan(-0.03);
    expect(ownSpan(credited) / budget - 1).toBeLessThan(0.01);
    expect(credited.avgJctSeconds).toBeLessThan(0.93 * without.avgJctSeconds);
    expect(credited.p95JctSeconds).toBeLessThan(0.7 * without.p95JctSeconds);
  });

  it("spreads the window's payback for a lull over the look-ahead: no hour of jobs piled up on a few GPUs", () => {
    // The lull at hours 6-8 was spent in the bursts after it; when it left the 24-hour window (hours
    // 29-32) the window owed that back. Measured at 1.6x the minimum, the fewest GPUs paid in an hour
    // while 15 or more jobs were present: 36 of a budget of 119 with a one-hour look (24 jobs), 76 with
    // three hours (18.9); average JCT 2774 -> 2653 s.
    const budget = 1.6 * minimum;
    const lowestBusyHour = (options: PolicyOptions) => {
      const hours: Array<{ paid: number; jobs: number; seconds: number }> = [];
      let last: { at: number; paid: number; jobs: number } | undefined;
      const observer = (tick: TickSnapshot) => {
        const now = tick.cluster.now;
        if (last) {
          const hour = Math.floor(last.at / 3600);
          const slot = (hours[hour] ??= { paid: 0, jobs: 0, seconds: 0 });
          slot.paid += last.paid * (now - last.at);
          slot.jobs += last.jobs * (now - last.at);
          slot.seconds += now - last.at;
        }
        last = {
          at: now,
          paid: tick.cluster.nodes.reduce((sum, n) => sum + n.gpus, 0),
          jobs: tick.jobs.length,
        };
      };
      const { result } = simulate({
        trace,
        policy: 'boa',
        options: { budget, ...options },
        profiles,
        truthOf,
        observer,
      });
      const busy = hours.filter((h) => h && h.jobs / h.seconds >= 15).map((h) => h.paid / h.seconds);
      return { lowest: Math.min(...busy), result };
    };
    const oneHour = lowestBusyHour({ ceilingLookaheadHours: 1 });
    const threeHours = lowestBusyHour({});
    expect(oneHour.lowest).toBeLessThan(0.4 * budget);
    expect(threeHours.lowest).toBeGreaterThan(0.55 * budget);
    expect(threeHours.result.avgJctSeconds).toBeLessThan(oneHour.result.avgJctSeconds);
    expect(threeHours.result.peakDayPaidGpuHoursPerHour / budget - 1).toBeLessThan(0.005);
  });

  it("with oracle rates (the trace's own) also finishes every job near the budget", () => {
    const { result } = simulate({
      trace,
      policy: 'boa',
      options: { budget: 2 * minimum, rates: 'oracle' },
      profiles,
      truthOf,
    });
    expect(result.completed).toBe(960);
    expect(Math.abs(result.paidGpuHoursPerHour / (2 * minimum) - 1)).toBeLessThan(0.1);
  });
});
