/**
 * The BOA paper's implementation trace (workload-1: cifar10, bert, deepspeech2; 85 jobs) at a matched
 * paid usage of 40 GPU-hours/hour (on the arrival-span yardstick), each knob swept around that spend
 * and average JCT interpolated at exactly 40 (`jctAtPaid`). The old headline (boa 1.63x ahead of
 * pollux-autoscale) needed oracle rates for boa and a weakened Pollux; honestly, Pollux leads here.
 * boa runs the service's spend ceiling (src/core/spend-ceiling.ts), which no other policy has: it holds
 * boa's spend within the window's budget at every tick, while the others are matched on the average only.
 * docs/comparison.md has the numbers.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseProfileFile } from '../../src/core/profile.ts';
import { parseTrace } from '../../src/core/trace.ts';
import { jctAtPaid } from '../../src/sim/matched.ts';
import type { PolicyOptions } from '../../src/sim/policy.ts';
import { simulate, truthProvider } from '../../src/sim/run.ts';
import { POLLUX, REPO } from '../helpers/run-script.ts';

const profiles = parseProfileFile(JSON.parse(readFileSync(resolve(REPO, 'data/profiles.json'), 'utf8')));
const truthOf = truthProvider(POLLUX);
const trace = parseTrace(readFileSync(resolve(POLLUX, 'workloads/workload-1.csv'), 'utf8'));
const apps = ['cifar10', 'bert', 'deepspeech2'];
const MATCHED_PAID = 40;

function sweep(policy: string, options: PolicyOptions[]) {
  return options.map((o) => simulate({ trace, apps, policy, options: o, profiles, truthOf }).result);
}

describe('workload-1 at a matched paid usage of 40 GPU-hours/hour', () => {
  // Budgets and targets that bracket a paid 40 (measured: boa online 37.99, 40.23 and 41.96, oracle
  // 39.64 and 41.09).
  const online = sweep('boa', [{ budget: 36 }, { budget: 38 }, { budget: 40 }]);
  const oracle = sweep('boa', [
    { budget: 40, rates: 'oracle' },
    { budget: 42, rates: 'oracle' },
  ]);
  const pollux = sweep('pollux-autoscale', [{ target: 0.6 }, { target: 0.65 }]);
  const oldPollux = sweep(
    'pollux-autoscale',
    [0.55, 0.6, 0.65].map((target) => ({
      target,
      explorationCap: true,
      utilityWindowTicks: 15,
      bootFreeze: true,
    })),
  );
  const at = (runs: typeof online) => jctAtPaid(runs, MATCHED_PAID) as number;

  it('completes every job in every run, and every sweep brackets the matched spend', () => {
    for (const r of [...online, ...oracle, ...pollux, ...oldPollux]) expect(r.completed).toBe(85);
    for (const runs of [online, oracle, pollux, oldPollux])
      expect(jctAtPaid(runs, MATCHED_PAID)).not.toBeNull();
  });

  it('the old lead needs oracle rates or the old Pollux settings (cap, 15-tick window, freeze)', () => {
    // Measured: the old Pollux about 1582 s against boa's 1065 s with oracle rates and 1282 s online.
    expect(at(oldPollux) / at(oracle)).toBeGreaterThan(1.1);
    expect(at(online)).toBeLessThan(at(oldPollux));
  });

  it("boa's average JCT is behind the default (strongest) pollux-autoscale with online rates, ahead with oracle ones", () => {
    // Measured: boa online about 1236 s, pollux-autoscale 1194 s (0.97x; 0.93x before the queue for the
    // budget served the least work left first, 0.89x before the plan cap was the default, 0.86x before narrowing by price under the ceiling, 0.80x before the GPUs the ceiling
    // left idle were handed out, 0.71x before narrowed jobs kept their width under it). The issue's
    // target is not met here. With oracle rates boa is about 1065 s (1103 s without the plan cap, 1172 s
    // with a common width under the ceiling, 1200 s before the hand-out, 1307 s before the kept widths).
    expect(at(pollux) / at(online)).toBeLessThan(0.98);
    expect(at(oracle)).toBeLessThan(at(online));
    expect(at(oracle) / at(pollux)).toBeLessThan(0.95);
  });
});
