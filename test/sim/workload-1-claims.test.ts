/**
 * The BOA paper's implementation trace (workload-1: cifar10, bert, deepspeech2; 85 jobs): boa against
 * Pollux's autoscaler at a matched paid usage of 40 GPU-hours/hour. Each policy's knob is swept around
 * that spend and its average JCT interpolated at exactly 40 (`jctAtPaid`).
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
  const budgets = [36, 38, 40, 42];
  const exact = sweep(
    'boa',
    budgets.map((budget) => ({ budget, solver: 'exact' })),
  );
  const paper = sweep(
    'boa',
    budgets.map((budget) => ({ budget, solver: 'paper' })),
  );
  const pollux = sweep(
    'pollux-autoscale',
    [0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7].map((target) => ({ target })),
  );

  it('completes every job in every run', () => {
    for (const r of [...exact, ...paper, ...pollux]) expect(r.completed).toBe(85);
  });

  it("boa's average JCT is at least 1.6x lower than pollux-autoscale's", () => {
    const boa = jctAtPaid(exact, MATCHED_PAID);
    const polluxJct = jctAtPaid(pollux, MATCHED_PAID);
    expect(boa).not.toBeNull();
    expect(polluxJct).not.toBeNull();
    expect((polluxJct as number) / (boa as number)).toBeGreaterThanOrEqual(1.6);
  });

  it('boa with the exact calculator is no worse than with the paper’s', () => {
    const e = jctAtPaid(exact, MATCHED_PAID) as number;
    const p = jctAtPaid(paper, MATCHED_PAID) as number;
    expect(e).toBeLessThanOrEqual(p);
  });
});
