import { describe, expect, it } from 'vitest';
import { runSimulation } from '../../../src/sim/engine/engine.ts';
import type { Decision, Policy } from '../../../src/sim/policy.ts';
import { fakeProfiles, linearTruth, scriptedPolicy, traceJob } from './fakes.ts';

const truth = linearTruth(2, 100);
function run(decide: Policy['decide'], mode: 'fixed' | 'autoscaled' = 'fixed') {
  return runSimulation({
    jobs: [traceJob('first', 0), traceJob('second', 0)],
    truthOf: () => truth,
    profiles: fakeProfiles({ fake: 2 }),
    policy: scriptedPolicy(decide, mode),
    options: { budget: 4 },
    traceRatesPerHour: { fake: 1 },
    config: { maxNodes: 3 },
  });
}
const allocate = (entries: Array<[number, number[]]>, desiredNodes?: number): Decision => ({
  allocations: new Map(entries),
  ...(desiredNodes === undefined ? {} : { desiredNodes }),
});

describe('the engine refuses a decision that breaks an invariant, naming policy, tick and job', () => {
  it('more GPUs on a node than it has', () => {
    expect(() =>
      run(() =>
        allocate([
          [0, [0, 0, 0]],
          [1, [0, 0]],
        ]),
      ),
    ).toThrow(
      /policy "scripted" at tick 0 \(t = 0 s\): node 0 has 4 GPUs but 5 are allocated, to job\(s\) 0 \(first\), 1 \(second\)/,
    );
  });

  it('a node the cluster does not have', () => {
    expect(() => run(() => allocate([[1, [7]]]))).toThrow(
      /tick 0 .*job 1 \(second\) is allocated on node 7, which the cluster does not have/,
    );
  });

  it('a booting node', () => {
    let tick = 0;
    const early = () => allocate(tick++ === 0 ? [] : [[0, [0]]], 1);
    expect(() => run(early, 'autoscaled')).toThrow(
      /tick 1 \(t = 60 s\): job 0 \(first\) is allocated on node 0, still booting \(ready at 90 s\)/,
    );
  });

  it('a job that is not active', () => {
    expect(() => run(() => allocate([[9, [0]]]))).toThrow(/allocation for job 9, which is not active/);
  });

  it('more nodes than allowed, or a bad node count', () => {
    expect(() => run(() => allocate([], 4), 'autoscaled')).toThrow(
      /desiredNodes 4 is above the cluster's maximum of 3/,
    );
    expect(() => run(() => allocate([], 1.5), 'autoscaled')).toThrow(
      /desiredNodes must be an integer >= 0, got 1.5/,
    );
  });

  it('no allocations map', () => {
    expect(() => run(() => ({}) as Decision)).toThrow(/the decision has no allocations map/);
  });

  it('accepts allocations in any order and shows them to the policy sorted', () => {
    const seen: number[][] = [];
    const decide: Policy['decide'] = (_cluster, jobs) => {
      for (const job of jobs) if (job.allocation.length) seen.push([...job.allocation]);
      return allocate(jobs.map((job) => [job.id, [1, 0]]));
    };
    const result = runSimulation({
      jobs: [traceJob('first', 0)],
      truthOf: () => truth,
      profiles: fakeProfiles({ fake: 2 }),
      policy: scriptedPolicy(decide, 'fixed'),
      options: { budget: 8 },
      traceRatesPerHour: { fake: 1 },
    });
    expect(result.finished).toBe(true);
    expect(seen[0]).toEqual([0, 1]);
  });
});
