import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseProfileFile } from '../../../../src/core/profile.ts';
import { parseTrace } from '../../../../src/core/trace.ts';
import type { JobCost } from '../../../../src/sim/policies/cuckoo/cost.ts';
import { cuckooPolicy } from '../../../../src/sim/policies/cuckoo/index.ts';
import { admit } from '../../../../src/sim/policies/cuckoo/scheduler.ts';
import { simulate, truthProvider } from '../../../../src/sim/run.ts';
import { POLLUX, REPO } from '../../../helpers/run-script.ts';
import { clusterView, context, jobView } from '../ones/fakes.ts';

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

  it('admits running jobs, then waiting jobs least slack first, while each can have a GPU', () => {
    const jobs = [jobView(0, { allocation: [0], rescales: 1 }), jobView(1), jobView(2), jobView(3)];
    const costs: JobCost[] = [500, 500, -10, 100].map((slack) => ({ slack, cost: new Float64Array(2) }));
    expect(admit(jobs, costs, 3)).toEqual([0, 2, 3]);
    expect(admit(jobs, costs, 8)).toEqual([0, 2, 3, 1]);
  });

  it('lets the job with the most slack wait when GPUs are short', () => {
    const policy = cuckooPolicy.create(context(), { budget: 4 });
    // Jobs 1-4 arrived long ago (deadlines passed); job 5 just arrived (its deadline is ahead).
    const jobs = [1, 2, 3, 4]
      .map((id) => jobView(id, { arrival: NOW - 5000 }))
      .concat(jobView(5, { arrival: NOW }));
    const decision = policy.decide(clusterView(1, { now: NOW }), jobs);
    expect([1, 2, 3, 4, 5].map((id) => widthOf(decision, id))).toEqual([1, 1, 1, 1, 0]);
  });

  it('gives more GPUs to a late job than to one that can still make its deadline', () => {
    const policy = cuckooPolicy.create(context(), { budget: 8 });
    const late = jobView(1, { arrival: NOW - 5000 });
    const fresh = jobView(2, { arrival: NOW });
    const decision = policy.decide(clusterView(2, { now: NOW }), [late, fresh]);
    expect(widthOf(decision, 1) + widthOf(decision, 2)).toBe(8);
    expect(widthOf(decision, 1)).toBeGreaterThan(widthOf(decision, 2));
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
