/** The behaviours boa is judged on, on the measured truth: budget held, every job done, exact vs paper. */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseProfileFile } from '../../../../src/core/profile.ts';
import { arrivalRatesPerHour, parseTrace } from '../../../../src/core/trace.ts';
import { BoaPlanner } from '../../../../src/sim/policies/boa/planner.ts';
import { simulate, truthProvider } from '../../../../src/sim/run.ts';
import { generateTrace } from '../../../../src/sim/trace-gen/generate.ts';
import { NEW_TRACE_MIX } from '../../../../scripts/lib/mixes.ts';
import { POLLUX, REPO } from '../../../helpers/run-script.ts';

const profiles = parseProfileFile(JSON.parse(readFileSync(resolve(REPO, 'data/profiles.json'), 'utf8')));
const truthOf = truthProvider(POLLUX);

describe('boa on workload-1 (cifar10, bert, deepspeech2: 85 jobs) at budget 40', () => {
  const trace = parseTrace(readFileSync(resolve(POLLUX, 'workloads/workload-1.csv'), 'utf8'));
  const run = (solver: 'exact' | 'paper') =>
    simulate({
      trace,
      apps: ['cifar10', 'bert', 'deepspeech2'],
      policy: 'boa',
      options: { budget: 40, solver },
      profiles,
      truthOf,
    }).result;
  const exact = run('exact');
  const paper = run('paper');

  it('finishes every job and pays about the budget', () => {
    expect(exact.completed).toBe(85);
    expect(Math.abs(exact.paidGpuHoursPerHour / 40 - 1)).toBeLessThan(0.06);
    expect(exact.allocatedGpuHoursPerHour).toBeLessThan(exact.paidGpuHoursPerHour);
  });

  it('is no slower with the exact calculator than with the paper one', () => {
    expect(paper.completed).toBe(85);
    expect(exact.avgJctSeconds).toBeLessThanOrEqual(paper.avgJctSeconds);
  });
});

describe('boa on a generated 960-job, 48-hour newTrace-mix trace (SCV 2.65)', () => {
  const trace = generateTrace({ jobs: 960, hours: 48, mix: NEW_TRACE_MIX, scv: 2.65, seed: 1 });
  const minimum = new BoaPlanner(profiles, 'exact', 1).minFeasible(arrivalRatesPerHour(trace));

  it.each([1.2, 1.5, 2, 2.5, 3])(
    'holds the paid time-average within 5 percent of the budget at %sx the minimum',
    (factor) => {
      const budget = factor * minimum;
      const { result } = simulate({ trace, policy: 'boa', options: { budget }, profiles, truthOf });
      expect(result.completed).toBe(960);
      expect(Math.abs(result.paidGpuHoursPerHour / budget - 1)).toBeLessThan(0.05);
    },
  );

  it('with online rates, re-plans as the estimates move and still finishes every job', () => {
    const { result } = simulate({
      trace,
      policy: 'boa',
      options: { budget: 2 * minimum, rates: 'online' },
      profiles,
      truthOf,
    });
    expect(result.completed).toBe(960);
    expect(Math.abs(result.paidGpuHoursPerHour / (2 * minimum) - 1)).toBeLessThan(0.1);
  });
});
