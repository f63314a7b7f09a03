import { describe, expect, it } from 'vitest';
import { polluxAutoscalePolicy, polluxFixedPolicy } from '../../../../src/sim/policies/pollux/index.ts';
import { PolluxScheduler } from '../../../../src/sim/policies/pollux/scheduler.ts';
import { utilityBand } from '../../../../src/sim/policies/pollux/autoscale.ts';
import type { Decision, JobView } from '../../../../src/sim/policy.ts';
import { gpusPerNodeUsed, nodes } from '../fakes.ts';
import { clusterView, context, fakeOracle, flat, jobView, linear } from './fakes.ts';

const OLD = -1e9; // jobs this old have a restart factor of ~1

function totalGpus(decision: Decision): number {
  return [...decision.allocations.values()].reduce((s, a) => s + a.length, 0);
}

// The optimiser's choices, without AdaptDL's exploration cap (new jobs would be capped at 1 GPU).
const uncapped = (oracle: ReturnType<typeof fakeOracle>) =>
  new PolluxScheduler(context(oracle), { band: null, explorationCap: false });

describe('pollux-fixed decide', () => {
  it('gives the spare GPUs to the job that scales and one to the job that does not', () => {
    const policy = uncapped(fakeOracle({ 1: linear, 2: flat }));
    const decision = policy.decide(clusterView(nodes(2)), [
      jobView(1, { arrival: OLD }),
      jobView(2, { arrival: OLD }),
    ]);
    expect(decision.allocations.get(1)).toHaveLength(7);
    expect(decision.allocations.get(2)).toHaveLength(1);
  });

  it('uses only ready nodes, never more GPUs than a node has, and every job gets one', () => {
    const view = clusterView([...nodes(2), ...nodes(3, { ready: false, readyAt: 4000 }, 2)]);
    const jobs = [1, 2, 3, 4, 5].map((id) => jobView(id, { arrival: OLD }));
    const decision = uncapped(fakeOracle()).decide(view, jobs);
    const used = gpusPerNodeUsed(decision.allocations);
    expect([...used.keys()].every((id) => id === 0 || id === 1)).toBe(true);
    expect([...used.values()].every((g) => g <= 4)).toBe(true);
    expect(totalGpus(decision)).toBe(8);
    for (const job of jobs) expect(decision.allocations.get(job.id)?.length).toBeGreaterThanOrEqual(1);
  });

  it('keeps a young job where it is rather than restart it for a small gain', () => {
    // The job has run on 2 GPUs since it arrived 60 s ago (restart factor 60 / 90 = 2/3). Moving to 4
    // GPUs would raise goodput from 2 to 2.4, but 2.4 * 2/3 = 1.6 < 2: it stays.
    const oracle = fakeOracle({ 1: (g) => [0, 1, 2, 2.1, 2.4][g] as number });
    const job = jobView(1, { arrival: 3600 - 60, allocation: [0, 0], rescales: 1 });
    const policy = polluxFixedPolicy.create(context(oracle), { budget: 4 });
    expect(policy.decide(clusterView(nodes(1)), [job]).allocations.get(1)).toEqual([0, 0]);
    // The same job, old (factor ~1): the 20% gain is worth the restart.
    const old = { ...job, arrival: OLD };
    expect(policy.decide(clusterView(nodes(1)), [old]).allocations.get(1)).toHaveLength(4);
  });

  it("by default has no exploration cap (profiles seeded, as in the BOA paper); AdaptDL's cap can be set", () => {
    const job = jobView(1, { arrival: OLD, allocation: [0, 0], rescales: 1 });
    const capped = new PolluxScheduler(context(fakeOracle()), { band: null, explorationCap: true });
    expect(capped.decide(clusterView(nodes(4)), [job]).allocations.get(1)).toHaveLength(4);
    const free = new PolluxScheduler(context(fakeOracle()), { band: null });
    expect(free.decide(clusterView(nodes(4)), [job]).allocations.get(1)).toHaveLength(16);
  });

  it('is deterministic: the same views give the same decision, whatever the seed', () => {
    const jobs = [1, 2, 3].map((id) => jobView(id, { arrival: id * 100 }));
    const oracle = fakeOracle({ 1: (g, n) => g / n, 2: flat, 3: (g) => Math.sqrt(g) });
    const a = polluxFixedPolicy
      .create(context(oracle, 1), { budget: 12 })
      .decide(clusterView(nodes(3)), jobs);
    const b = polluxFixedPolicy
      .create(context(oracle, 99), { budget: 12 })
      .decide(clusterView(nodes(3)), jobs);
    expect(b.allocations).toEqual(a.allocations);
  });
});

describe('pollux-autoscale decide', () => {
  const autoscaled = (count: number, fields = {}) =>
    clusterView(nodes(count), { mode: 'autoscaled', maxNodes: 50, ...fields });

  /** Runs `ticks` decisions with the same views; returns the last desired node count. */
  function afterTicks(scheduler: PolluxScheduler, count: number, jobs: JobView[], ticks: number) {
    let desired: number | undefined;
    for (let t = 0; t < ticks; t++) desired = scheduler.decide(autoscaled(count), jobs).desiredNodes;
    return desired;
  }

  it("with a 15-tick window (AdaptDL's simulator) holds the size for 14 ticks, then grows above c + D", () => {
    // One linear job on all 4 GPUs of 1 node: utility 4 / 4 = 1 > 0.65.
    const scheduler = new PolluxScheduler(context(fakeOracle()), {
      band: utilityBand(0.5),
      windowTicks: 15,
      explorationCap: true,
    });
    const jobs = [jobView(1, { arrival: OLD, allocation: [0, 0, 0, 0], rescales: 1 })];
    expect(afterTicks(scheduler, 1, jobs, 14)).toBe(1);
    // A linear job keeps utility 1 at any size: the search goes as far as the job may grow, twice its
    // widest run (8 GPUs, 2 nodes); without the exploration cap, to its 64-GPU maximum (16 nodes).
    expect(afterTicks(scheduler, 1, jobs, 1)).toBe(2);
    // The default (the BOA paper's Pollux): no window, no cap: it grows at the first tick.
    const free = new PolluxScheduler(context(fakeOracle()), { band: utilityBand(0.5) });
    expect(afterTicks(free, 1, jobs, 1)).toBe(16);
  });

  it('measures utility on the ready GPUs while a node boots, unless frozen', () => {
    // One linear job on the 4 GPUs of the one ready node, a second node booting: utility 1 on the ready
    // GPUs (grow at once), 0.5 on all 8 (hold). The freeze takes no sample at all while a node boots.
    const jobs = [jobView(1, { arrival: OLD, allocation: [0, 0, 0, 0], rescales: 1 })];
    const booting = {
      ...autoscaled(1),
      nodes: [...autoscaled(1).nodes, { id: 1, gpus: 4, ready: false, readyAt: 1e9 }],
    };
    const live = new PolluxScheduler(context(fakeOracle()), { band: utilityBand(0.5) });
    expect(live.decide(booting, jobs).desiredNodes).toBe(16);
    const frozen = new PolluxScheduler(context(fakeOracle()), { band: utilityBand(0.5), bootFreeze: true });
    expect(frozen.decide(booting, jobs).desiredNodes).toBe(2);
  });

  it('shrinks when utility is below c - D, keeping the nodes in use', () => {
    // One flat job on 1 GPU of 4 nodes: utility 1 / 16 < 0.35; a single node is closest to 0.5.
    const scheduler = new PolluxScheduler(context(fakeOracle({ 1: flat })), { band: utilityBand(0.5) });
    const jobs = [jobView(1, { arrival: OLD, allocation: [2], rescales: 1 })];
    const decision = (() => {
      let last: Decision | undefined;
      for (let t = 0; t < 15; t++) last = scheduler.decide(autoscaled(4), jobs);
      return last as Decision;
    })();
    expect(decision.desiredNodes).toBe(1);
    expect(decision.allocations.get(1)).toEqual([2]);
  });

  it('holds inside the band: target 0.8, utility 0.8', () => {
    // Job goodput 0.8 per GPU past the first: 4 GPUs -> 3.4 / 4 = 0.85 (inside 0.74..0.86).
    const oracle = fakeOracle({ 1: (g) => (g === 0 ? 0 : 1 + 0.8 * (g - 1)) });
    const scheduler = new PolluxScheduler(context(oracle), { band: utilityBand(0.8), windowTicks: 1 });
    const jobs = [jobView(1, { arrival: OLD, allocation: [0, 0, 0, 0], rescales: 1 })];
    expect(afterTicks(scheduler, 1, jobs, 3)).toBe(1);
  });

  it('boots nodes for jobs on an empty cluster at once, and asks for none without jobs', () => {
    const policy = polluxAutoscalePolicy.create(context(fakeOracle()), {});
    const jobs = [1, 2, 3, 4, 5].map((id) => jobView(id, { arrival: 3600 }));
    const first = policy.decide(autoscaled(0), jobs);
    expect(first.allocations.size).toBe(0);
    expect(first.desiredNodes).toBeGreaterThanOrEqual(2);
    expect(policy.decide(autoscaled(3), []).desiredNodes).toBe(0);
  });

  it('never allocates booting nodes', () => {
    const policy = polluxAutoscalePolicy.create(context(fakeOracle()), { target: 0.5 });
    const view = clusterView([...nodes(1), ...nodes(2, { ready: false, readyAt: 9999 }, 1)], {
      mode: 'autoscaled',
      maxNodes: 10,
    });
    const decision = policy.decide(
      view,
      [1, 2, 3].map((id) => jobView(id, { arrival: OLD })),
    );
    expect([...gpusPerNodeUsed(decision.allocations).keys()]).toEqual([0]);
  });

  it('refuses a bad target with the allowed range', () => {
    expect(() => polluxAutoscalePolicy.create(context(fakeOracle()), { target: 1.2 })).toThrow(
      /pollux-autoscale: target .* strictly between 0 and 1, got 1.2/,
    );
  });
});
