import { describe, expect, it } from 'vitest';
import { runSimulation, type SimulationInput } from '../../../src/sim/engine/engine.ts';
import type { JobView, Policy } from '../../../src/sim/policy.ts';
import { fakeProfiles, greedyDecide, linearTruth, scriptedPolicy, traceJob } from './fakes.ts';

// 4 data epochs of 600 progress at 1 progress/s per GPU: 600 s of work on 4 GPUs.
const truth = linearTruth(4, 600);
const base = (policy: SimulationInput['policy'], jobs: SimulationInput['jobs']): SimulationInput => ({
  jobs,
  truthOf: () => truth,
  profiles: fakeProfiles({ fake: 4 }),
  policy,
  options: {},
  traceRatesPerHour: { fake: 1 },
});

describe('one job on an autoscaled cluster', () => {
  const run = runSimulation(base(scriptedPolicy(greedyDecide(4)), [traceJob('a', 100)]));

  it('waits for the boot, pays the restart, then runs at its placement', () => {
    // Tick at 100 asks for a node (ready at 190); tick 160 it boots; tick 220 the job starts,
    // restarts until 250 and needs 600 s: done at 850.
    expect(run.finished).toBe(true);
    expect(run.jobs[0]?.firstStart).toBe(220);
    expect(run.jobs[0]?.completedAt).toBe(850);
    expect(run.metrics.avgJctSeconds).toBe(750);
    expect(run.metrics.p95JctSeconds).toBe(750);
    expect(run.metrics.avgQueueSeconds).toBe(120);
    expect(run.metrics.rescales).toBe(0);
  });

  it('bills the node from its request and the job from its start, spend read over one hour', () => {
    // One arrival has no span: the yardstick's hour makes the rate the run's GPU-hours.
    expect(run.metrics.paidGpuHoursPerHour).toBeCloseTo((4 * (850 - 100)) / 3600, 12);
    expect(run.metrics.allocatedGpuHoursPerHour).toBeCloseTo((4 * (850 - 220)) / 3600, 12);
    expect(run.metrics.peakNodes).toBe(1);
  });
});

describe('billing across a gap', () => {
  it('releases the empty node, pays its release lag, and boots again for the next job', () => {
    const calls: number[] = [];
    const decide: Policy['decide'] = (cluster, jobs) => {
      calls.push(cluster.now);
      return greedyDecide(4)(cluster, jobs);
    };
    const run = runSimulation(base(scriptedPolicy(decide), [traceJob('a', 0), traceJob('b', 3600)]));
    // a: ready 90, starts 120, done 750; released at tick 780, gone at 810. b: asks at 3600, done 4350.
    expect(run.jobs.map((j) => j.completedAt)).toEqual([750, 4350]);
    // Spend is averaged over the arrival span (0 to 3600), all of it counted, the second job's too.
    expect(run.metrics.paidGpuHoursPerHour).toBeCloseTo((4 * 810 + 4 * (4350 - 3600)) / 3600, 12);
    expect(run.metrics.allocatedGpuHoursPerHour).toBeCloseTo((4 * 630 + 4 * 630) / 3600, 12);
    expect(run.metrics.spanHours).toBeCloseTo(4350 / 3600, 12);
    expect(run.metrics.arrivalSpanHours).toBe(1);
    expect(run.metrics.p50JctSeconds).toBe(750);
    expect(run.metrics.p99JctSeconds).toBe(750);
    // With no job and no node there is nothing to decide: the ticks from 840 to 3540 are skipped.
    expect(calls).not.toContain(840);
    expect(calls).toContain(3600);
    expect(calls.length).toBeLessThan(30);
  });
});

describe('a fixed cluster', () => {
  it('has ceil(budget / 4) ready nodes, paid for the whole run', () => {
    let seen = -1;
    const decide: Policy['decide'] = (cluster, jobs) => {
      seen = cluster.nodes.filter((n) => n.ready).length;
      return greedyDecide(4)(cluster, jobs);
    };
    const policy = scriptedPolicy(decide, 'fixed');
    const run = runSimulation({
      ...base(policy, [traceJob('a', 0), traceJob('b', 0)]),
      options: { budget: 6 },
    });
    expect(seen).toBe(2);
    expect(run.jobs.map((j) => j.completedAt)).toEqual([630, 630]);
    // Two nodes of 4 GPUs for 630 s, both jobs at once: the spend is read over the yardstick's hour.
    expect(run.metrics.paidGpuHoursPerHour).toBeCloseTo((8 * 630) / 3600, 12);
    expect(run.metrics.allocatedGpuHoursPerHour).toBeCloseTo((8 * 630) / 3600, 12);
  });

  it('needs a budget to know its size', () => {
    expect(() => runSimulation(base(scriptedPolicy(greedyDecide(1), 'fixed'), [traceJob('a', 0)]))).toThrow(
      /runs on a fixed cluster: give its size/,
    );
  });
});

describe('rescales', () => {
  it('cost 30 s of no progress each, GPUs held, counted after the first start', () => {
    // The job hops between two nodes every tick: 30 s of restart, then 30 s at 4 progress/s per tick.
    const decide: Policy['decide'] = (cluster, jobs) => {
      const node = Math.round(cluster.now / 60) % 2;
      return { allocations: new Map(jobs.map((j) => [j.id, [node, node, node, node]])) };
    };
    const run = runSimulation({
      ...base(scriptedPolicy(decide, 'fixed'), [traceJob('a', 0)]),
      options: { budget: 8 },
    });
    // 2400 progress / 120 per tick = 20 ticks: done at 1200 after 20 starts.
    expect(run.jobs[0]?.completedAt).toBe(1200);
    expect(run.jobs[0]?.rescales).toBe(20);
    expect(run.metrics.rescales).toBe(19);
    expect(run.jobs[0]?.attainedGpuSeconds).toBe(4 * 1200);
  });
});

describe('statistical epochs', () => {
  it('follow the profile split of the job progress (8 data epochs into 4 statistical epochs)', () => {
    const seen: Array<[number, number]> = [];
    const decide: Policy['decide'] = (cluster, jobs) => {
      for (const j of jobs) seen.push([j.progressFraction, j.statEpoch]);
      return greedyDecide(1)(cluster, jobs);
    };
    const eight = linearTruth(8, 100);
    runSimulation({
      ...base(scriptedPolicy(decide, 'fixed'), [traceJob('a', 0)]),
      truthOf: () => eight,
      options: { budget: 4 },
    });
    expect(seen.length).toBeGreaterThan(10);
    for (const [fraction, epoch] of seen) expect(epoch).toBe(Math.min(3, Math.floor(fraction * 4 + 1e-12)));
    expect(new Set(seen.map(([, e]) => e))).toEqual(new Set([0, 1, 2, 3]));
  });

  it('refuses a profile with more statistical epochs than the job has data epochs', () => {
    const input = {
      ...base(scriptedPolicy(greedyDecide(1)), [traceJob('a', 0)]),
      profiles: fakeProfiles({ fake: 5 }),
    };
    expect(() => runSimulation(input)).toThrow(/5 statistical epochs but the job has only 4 data epochs/);
  });

  it('refuses an application without a profile, listing the profiled ones', () => {
    const input = base(scriptedPolicy(greedyDecide(1)), [traceJob('a', 0, 'resnet')]);
    expect(() => runSimulation(input)).toThrow(
      /no profile for application "resnet"; the profiles have: fake/,
    );
  });
});

describe('callbacks and the horizon', () => {
  it('reports arrivals and completions in time order at their exact times', () => {
    const events: Array<[string, number, number]> = [];
    const policy = scriptedPolicy(greedyDecide(4), 'autoscaled', {
      onArrival: (job: JobView, now: number) => events.push(['arrival', job.id, now]),
      onCompletion: (job: JobView, now: number) => events.push(['completion', job.id, now]),
    });
    const jobs = [traceJob('a', 0), traceJob('b', 700), traceJob('c', 760), traceJob('d', 30)];
    runSimulation(base(policy, jobs));
    const times = events.map(([, , t]) => t);
    expect(times).toEqual([...times].sort((x, y) => x - y));
    expect(events.filter(([kind]) => kind === 'arrival').map(([, , t]) => t)).toEqual([0, 30, 700, 760]);
    expect(events.filter(([kind]) => kind === 'completion')).toHaveLength(4);
  });

  it('stops a stuck run at the horizon and reports the incomplete jobs', () => {
    const idle = scriptedPolicy(() => ({ allocations: new Map() }));
    const run = runSimulation({
      ...base(idle, [traceJob('a', 0), traceJob('b', 10)]),
      config: { horizonSeconds: 3600 },
    });
    expect(run.finished).toBe(false);
    expect(run.metrics.completed).toBe(0);
    expect(run.metrics.jobs).toBe(2);
    expect(run.metrics.spanHours).toBeGreaterThanOrEqual(1);
    expect(run.metrics.spanHours).toBeLessThan(1.05);
  });

  it('is deterministic: the same input gives the same run', () => {
    const jobs = [0, 50, 51, 400, 2000].map((t, i) => traceJob(`j${i}`, t));
    const once = runSimulation(base(scriptedPolicy(greedyDecide(2)), jobs));
    const twice = runSimulation(base(scriptedPolicy(greedyDecide(2)), jobs));
    expect(twice.jobs).toEqual(once.jobs);
    expect(twice.metrics).toEqual(once.metrics);
  });
});
