import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseProfileFile } from '../../../../src/core/profile.ts';
import { parseTrace } from '../../../../src/core/trace.ts';
import type { JobCost } from '../../../../src/sim/policies/cuckoo/cost.ts';
import { deadlineFactor } from '../../../../src/sim/policies/cuckoo/deadlines.ts';
import { cuckooPolicy } from '../../../../src/sim/policies/cuckoo/index.ts';
import { admit } from '../../../../src/sim/policies/cuckoo/scheduler.ts';
import { simulate, truthProvider } from '../../../../src/sim/run.ts';
import { POLLUX, REPO } from '../../../helpers/run-script.ts';
import { jobView, nodes } from '../fakes.ts';
import { clusterView, context } from '../ones/fakes.ts';

const NOW = 3600;
const widthOf = (decision: { allocations: ReadonlyMap<number, readonly number[]> }, id: number) =>
  decision.allocations.get(id)?.length ?? 0;

describe('cuckoo', () => {
  it('refuses a missing or invalid budget, saying what is allowed', () => {
    expect(() => cuckooPolicy.create(context(), {})).toThrow(
      /cuckoo: .*--budget, a positive number of GPUs.*got none/,
    );
    expect(() => cuckooPolicy.create(context(), { budget: Number.NaN })).toThrow(/got NaN/);
  });

  it('admits running jobs, then waiting jobs least slack first, those out of reach last and shortest first', () => {
    const jobs = [0, 1, 2, 3, 4, 5].map((id) =>
      jobView(id, id === 0 ? { allocation: [0], rescales: 1 } : {}),
    );
    const costs: JobCost[] = [
      [500, 10],
      [500, 10],
      [20, 10],
      [100, 10],
      [-10, 900],
      [-50, 300],
    ].map(([slack, fastest]) => ({
      slack: slack as number,
      fastest: fastest as number,
      cost: new Float64Array(2),
    }));
    expect(admit(jobs, costs, 3)).toEqual([0, 2, 3]);
    expect(admit(jobs, costs, 8)).toEqual([0, 2, 3, 1, 5, 4]);
  });

  it('starts a job that can still make its deadline before those that cannot', () => {
    const policy = cuckooPolicy.create(context(), { budget: 4 });
    // Jobs 1-4 arrived long ago (deadlines passed); job 5 just arrived (its deadline is ahead).
    const jobs = [1, 2, 3, 4]
      .map((id) => jobView(id, { arrival: NOW - 5000 }))
      .concat(jobView(5, { arrival: NOW }));
    const decision = policy.decide(clusterView(1, { now: NOW }), jobs);
    expect([1, 2, 3, 4, 5].map((id) => widthOf(decision, id))).toEqual([1, 1, 1, 0, 1]);
  });

  it('gives a job the width it needs to make its deadline, before a hopeless job gets more', () => {
    // Seed 1 draws f = 7.67 for job 1 and 9.48 for job 2 (`lin`: 37.5 s at best, so 288 s and 356 s).
    expect(deadlineFactor(1, 1)).toBeCloseTo(7.67, 2);
    expect(deadlineFactor(1, 2)).toBeCloseTo(9.48, 2);
    const policy = cuckooPolicy.create(context(1), { budget: 5 });
    const hopeless = jobView(1, { arrival: NOW - 5000 });
    // Job 2's deadline is 156 s away; it takes 30 s + 300 / w s, so it needs 3 GPUs (130 s).
    const pressed = jobView(2, { arrival: NOW - 200 });
    const five = clusterView(2, {
      now: NOW,
      nodes: [...nodes(1), { id: 1, gpus: 1, ready: true, readyAt: 0 }],
    });
    const decision = policy.decide(five, [hopeless, pressed]);
    // Without the deadline the hopeless job would get 3 (its allowance is the tighter one) and job 2 only 2.
    expect([widthOf(decision, 1), widthOf(decision, 2)]).toEqual([2, 3]);
  });

  it('keeps a running job in place unless its best width at least doubles or halves it', () => {
    // Alone on 8 GPUs a `lin` job is best at 8 (linear up to 8).
    const policy = cuckooPolicy.create(context(), { budget: 8 });
    const at = (width: number) =>
      jobView(1, {
        arrival: NOW - 60,
        allocation: Array.from({ length: width }, (_, i) => (i < 4 ? 0 : 1)),
        rescales: 1,
      });
    const five = at(5);
    expect(policy.decide(clusterView(2, { now: NOW }), [five]).allocations.get(1)).toEqual(five.allocation);
    expect(widthOf(policy.decide(clusterView(2, { now: NOW }), [at(3)]), 1)).toBe(8);
  });

  describe('on the first 40 jobs of workload-1 (cifar10, bert, deepspeech2) at 16 GPUs', () => {
    const profiles = parseProfileFile(JSON.parse(readFileSync(resolve(REPO, 'data/profiles.json'), 'utf8')));
    const trace = parseTrace(readFileSync(resolve(POLLUX, 'workloads/workload-1.csv'), 'utf8'))
      .filter((j) => ['cifar10', 'bert', 'deepspeech2'].includes(j.application))
      .slice(0, 40);
    const run = (seed: number) =>
      simulate({
        trace,
        policy: 'cuckoo',
        options: { budget: 16 },
        seed,
        profiles,
        truthOf: truthProvider(POLLUX),
      });
    const first = run(5);

    it('finishes every job and is deterministic for a seed; other seeds draw other deadlines', () => {
      expect(first.result.completed).toBe(trace.length);
      expect({ ...run(5).result, simMs: 0 }).toEqual({ ...first.result, simMs: 0 });
      expect(run(6).result.avgJctSeconds).not.toBe(first.result.avgJctSeconds);
    });
  });
});
