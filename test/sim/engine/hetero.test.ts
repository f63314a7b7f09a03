/**
 * GPU types, co-location, deadlines and labels (issue 13), on the linear fake truth so every expected
 * number is a hand calculation from truth/hardware.ts's model.
 */
import { describe, expect, it } from 'vitest';
import { runSimulation, type SimulationInput } from '../../../src/sim/engine/engine.ts';
import { parseClusterSpec } from '../../../src/sim/gpu-types.ts';
import type { Decision, JobView } from '../../../src/sim/policy.ts';
import { colocationRates, COMPUTE_BOUND, typeSpeed } from '../../../src/sim/truth/hardware.ts';
import { slackFactor } from '../../../src/sim/truth/labels.ts';
import { fakeProfiles, linearTruth, scriptedPolicy, traceJob } from './fakes.ts';

// 4 data epochs of 600 progress at 1 progress/s per GPU: 600 s on 4 GPUs (compute only, no sync).
const truth = linearTruth(4, 600);
const input = (
  decide: (jobs: readonly JobView[], nodes: readonly number[]) => Decision,
  cluster: string,
  jobs: SimulationInput['jobs'],
  config: SimulationInput['config'] = {},
): SimulationInput => ({
  jobs,
  truthOf: () => truth,
  profiles: fakeProfiles({ fake: 4 }),
  policy: scriptedPolicy(
    (view, active) =>
      decide(
        active,
        view.nodes.map((n) => n.id),
      ),
    'fixed',
  ),
  options: {},
  traceRatesPerHour: { fake: 1 },
  config: { cluster: parseClusterSpec(cluster), ...config },
});
const allOn = (node: number) => (jobs: readonly JobView[]) => ({
  allocations: new Map(jobs.map((j) => [j.id, [node, node, node, node]])),
  colocate: jobs.length > 1 ? [jobs.map((j) => j.id)] : [],
});

describe('GPU types', () => {
  it('runs a job on a v100 node faster by the class blend of throughput and bandwidth ratios', () => {
    const run = runSimulation(input(allOn(0), 'p3:1', [traceJob('a', 0)]));
    // Half compute-bound (the fake class's default): 0.5 x 65/125 + 0.5 x 320/900 of the t4 time.
    const factor = 0.5 * (65 / 125) + 0.5 * (320 / 900);
    expect(run.jobs[0]?.completedAt).toBeCloseTo(30 + 600 * factor, 9);
    expect(run.metrics.utilizationByType).toEqual({ v100: expect.any(Number) });
  });

  it('speeds classes up by their own blend (v100: bandwidth gains most), and slows multi-node sync on p3', () => {
    const split = { compute: 1, comm: 0 };
    expect(COMPUTE_BOUND.cifar10).toBeGreaterThan(COMPUTE_BOUND.ncf);
    // v100's bandwidth ratio (900/320) beats its tensor ratio (125/65): memory-bound ncf gains more.
    expect(typeSpeed('ncf', 'v100', [4], split)).toBeCloseTo(1 / (0.2 * (65 / 125) + 0.8 * (320 / 900)), 12);
    expect(typeSpeed('cifar10', 'v100', [4], split)).toBeCloseTo(
      1 / (0.7 * (65 / 125) + 0.3 * (320 / 900)),
      12,
    );
    expect(typeSpeed('ncf', 'v100', [4], split)).toBeGreaterThan(typeSpeed('cifar10', 'v100', [4], split));
    const comm = { compute: 0, comm: 1 };
    expect(typeSpeed('bert', 'v100', [4], comm)).toBe(1); // within a node: kept
    expect(typeSpeed('bert', 'v100', [4, 4], comm)).toBeCloseTo(10 / 50, 12); // 10 vs 50 Gbit/s
    expect(typeSpeed('bert', 't4', [4, 4], comm)).toBe(1);
  });

  it('reports utilization per type, an idle pool at 0', () => {
    const run = runSimulation(input(allOn(0), 'g4dn:1,p3:1', [traceJob('a', 0)]));
    expect(run.metrics.utilizationByType.v100).toBe(0);
    expect(run.metrics.utilizationByType.t4).toBeGreaterThan(0.99);
  });

  it('lets an autoscaled policy rent one g4dn pool, its node count the bound', () => {
    const want = (n: number) => () => ({ allocations: new Map(), desiredNodes: n });
    const base = input(allOn(0), 'g4dn:2', [traceJob('a', 0)]);
    const autoscaled = (n: number) => ({
      ...base,
      policy: scriptedPolicy(want(n)),
      config: { ...base.config, horizonSeconds: 120 },
    });
    expect(runSimulation(autoscaled(2)).metrics.peakNodes).toBe(2);
    expect(() => runSimulation(autoscaled(3))).toThrow(
      /desiredNodes 3 is above the cluster's maximum of 2 nodes/,
    );
  });

  it('refuses a heterogeneous cluster for an autoscaled policy, naming why', () => {
    const bad = { ...input(allOn(0), 'g4dn:1,p3:1', [traceJob('a', 0)]) };
    expect(() =>
      runSimulation({ ...bad, policy: scriptedPolicy(() => ({ allocations: new Map() })) }),
    ).toThrow(/autoscales one g4dn \(t4\) node group/);
  });
});

describe('co-location', () => {
  it("gives CUCKOO Table 3's pair Muri's round plus 20% interference", () => {
    // ResNet F 37 + B 76, C 98; BERT 72 + 61, C 363 (ms): round = max(246, 461, 496) x 1.2.
    const [resnet, bert] = colocationRates([
      { compute: 113, comm: 98 },
      { compute: 133, comm: 363 },
    ]);
    expect(resnet).toBeCloseTo(211 / 595.2, 12);
    expect(bert).toBeCloseTo(496 / 595.2, 12);
    expect(colocationRates([{ compute: 1, comm: 0 }])).toEqual([1]);
  });

  it('runs two compute-only jobs on the same GPUs at 1 / 2.4 each, the GPUs counted once', () => {
    const run = runSimulation(input(allOn(0), 'g4dn:1', [traceJob('a', 0), traceJob('b', 0)]));
    for (const job of run.jobs) expect(job.completedAt).toBeCloseTo(30 + 600 * 2.4, 6);
    // One 4-GPU node busy for the whole run: the allocation is the node's, not twice it.
    expect(run.metrics.utilizationByType.t4).toBeCloseTo(1, 9);
    expect(run.metrics.paidGpuHoursPerHour).toBeGreaterThanOrEqual(run.metrics.allocatedGpuHoursPerHour);
  });

  it('gives the survivor the GPUs alone once its partner finishes inside an interval', () => {
    const short = linearTruth(2, 600); // 1200 progress
    const run = runSimulation({
      ...input(allOn(0), 'g4dn:1', [traceJob('short', 0, 'short'), traceJob('long', 0)]),
      truthOf: (app) => (app === 'short' ? short : truth),
      profiles: fakeProfiles({ fake: 4, short: 2 }),
    });
    const done = new Map(run.jobs.map((j) => [j.name, j.completedAt]));
    // Both at 4 / 2.4 progress/s after the restart: short done after 720 s, long has 1200 left at 4/s.
    expect(done.get('short')).toBeCloseTo(30 + 720, 6);
    expect(done.get('long')).toBeCloseTo(30 + 720 + 300, 6);
  });

  it('tells each member whom it shares with', () => {
    const seen: Array<readonly number[] | undefined> = [];
    runSimulation(
      input(
        (jobs) => {
          for (const j of jobs) seen.push(j.colocatedWith);
          return allOn(0)(jobs);
        },
        'g4dn:1',
        [traceJob('a', 0), traceJob('b', 0)],
      ),
    );
    expect(seen).toContainEqual([1]);
    expect(seen).toContainEqual([0]);
  });

  it('refuses groups on different GPUs, too large, or of jobs not sharing', () => {
    const two = [traceJob('a', 0), traceJob('b', 0)];
    const apart = () => ({
      allocations: new Map([
        [0, [0, 0]],
        [1, [0, 0, 0]],
      ]),
      colocate: [[0, 1]],
    });
    expect(() => runSimulation(input(apart, 'g4dn:1', two))).toThrow(/not on the same GPUs as job 0/);
    const overfull = () => ({ allocations: allOn(0)([{ id: 0 }, { id: 1 }] as JobView[]).allocations });
    expect(() => runSimulation(input(overfull, 'g4dn:1', two))).toThrow(/has 4 GPUs but 8 are allocated/);
    expect(() => runSimulation(input(allOn(0), 'g4dn:1', two, { maxGroupSize: 1 }))).toThrow(
      /allows no co-location \(maxGroupSize 1\)/,
    );
  });
});

describe('deadlines and labels', () => {
  it('takes the trace columns when given', () => {
    const jobs = [
      { ...traceJob('a', 0), deadline: 700, kind: 'interactive' as const },
      { ...traceJob('b', 0), deadline: 1000, kind: 'batch' as const },
    ];
    const first = (active: readonly JobView[]) => ({
      allocations: new Map(active.slice(0, 1).map((j) => [j.id, [0, 0, 0, 0]])),
    });
    const run = runSimulation(input(first, 'g4dn:1', jobs));
    // a: 0 -> 630 (met); b waits for a's GPUs from the tick at 660: done at 660 + 630 (missed).
    expect(run.jobs.map((j) => j.completedAt)).toEqual([630, 1290]);
    expect(run.metrics.deadlineSatisfactionRate).toBe(0.5);
    expect(run.metrics.interactiveJobs).toBe(1);
    expect(run.metrics.avgInteractiveQueueSeconds).toBe(0);
  });

  it("generates CUCKOO's deadlines and derives the kind from the isolated runtime at the request", () => {
    const jobs = [traceJob('a', 0, 'fake', 4), traceJob('b', 0, 'fake', 1)];
    const views: JobView[] = [];
    runSimulation(
      input(
        (active) => {
          views.push(...active);
          return allOn(0)(active.slice(0, 1));
        },
        'g4dn:1',
        jobs,
        { interactiveSeconds: 1200 },
      ),
    );
    const a = views.find((v) => v.name === 'a') as JobView;
    const b = views.find((v) => v.name === 'b') as JobView;
    // Alone: a (4 GPUs) 600 s, interactive; b (1 GPU) 2400 s, batch.
    expect(a.kind).toBe('interactive');
    expect(b.kind).toBe('batch');
    expect(a.deadline).toBeCloseTo(slackFactor(1, 0) * 600, 9);
    expect(b.deadline).toBeCloseTo(slackFactor(1, 1) * 2400, 9);
  });

  it('has no deadline with generation off, and then no satisfaction rate', () => {
    const run = runSimulation(input(allOn(0), 'g4dn:1', [traceJob('a', 0)], { deadlineSlack: null }));
    expect(run.jobs[0]?.deadline).toBe(Number.POSITIVE_INFINITY);
    expect(run.metrics.deadlineSatisfactionRate).toBeNaN();
  });
});
