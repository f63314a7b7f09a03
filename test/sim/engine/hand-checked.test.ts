/**
 * The simulator's accounting checked against tiny traces worked out by hand: every expected number below
 * is derived in its comment from the job's work, the truth model's throughput at the width it runs at,
 * the engine's timing (tick 60 s from the first arrival, boot 90 s, restart 30 s, release lag 30 s) and
 * the definitions of paid and of the spend yardstick (engine/metrics.ts, engine/window-paid.ts), never
 * copied from a run's output.
 */
import { describe, expect, it } from 'vitest';
import { parseTrace } from '../../../src/core/trace.ts';
import { runSimulation } from '../../../src/sim/engine/engine.ts';
import { fixedRequestPolicy } from '../../../src/sim/policies/fixed-request/index.ts';
import { UnknownAppError, truthProvider } from '../../../src/sim/run.ts';
import { createJobTruth } from '../../../src/sim/truth/model.ts';
import { secondsToProgress } from '../../../src/sim/truth/progress.ts';
import type { AppTables } from '../../../src/sim/truth/tables.ts';
import { fakeProfiles, traceJob } from './fakes.ts';

/*
 * A tiny application through the real truth model (createJobTruth: throughput table, gradient statistics,
 * best batch search), small enough to work out by hand.
 * - B0 = 8, largest batch 16, per-GPU batch fixed at 2: on k GPUs a batch B takes B / (2k) - 1
 *   accumulation steps, each costing step - sync (goodput.ts).
 * - 2 data epochs of 600 iterations at B0 (validation-8.csv: progress 600, 1200).
 * - Gradient statistics: epoch 0 has var 0, so the gain is 1 at any batch (a larger batch buys nothing);
 *   epoch 1 has sqr 0, so the gain is B / B0 (perfectly scalable): (var + sqr) / (var / (B/B0) + sqr).
 * - Measured steps: one node, 4 GPUs: 0.5 s, sync 0.05 s; one node, 2 GPUs: 0.5 s, sync 0.2 s.
 *
 * 4 GPUs ([4]): batch 8 = 4 x 2, no accumulation: 0.5 s a step; batch 16: 0.5 + (0.5 - 0.05) = 0.95 s.
 *   epoch 0: gain 1 either way, best 1 / 0.5 = 2 it/s -> 600 / 2 = 300 s;
 *   epoch 1: batch 16 gives 2 / 0.95 = 2.105 it/s > 2 -> 600 x 0.95 / 2 = 285 s.   Total 585 s.
 * 2 GPUs ([2]): batch 8 = 2 x 2 x 2 (1 accumulation): 0.5 + 0.3 = 0.8 s; batch 12: 1.1 s; batch 16: 1.4 s.
 *   epoch 0: gain 1, best 1 / 0.8 = 1.25 it/s -> 480 s;
 *   epoch 1: 1 / 0.8 = 1.25, 1.5 / 1.1 = 1.36, 2 / 1.4 = 1.43 it/s: batch 16 -> 600 x 1.4 / 2 = 420 s.
 *   Total 900 s.
 */
const tables: AppTables = {
  placements: [
    { placement: '4', localBsz: 2, stepTime: 0.5, syncTime: 0.05 },
    { placement: '2', localBsz: 2, stepTime: 0.5, syncTime: 0.2 },
  ],
  scalability: [],
  validation: [
    {
      batchSize: 8,
      rows: [
        { progress: 600, iteration: 75, metric: 0, gradSqr: 1, gradVar: 0 },
        { progress: 1200, iteration: 150, metric: 0, gradSqr: 0, gradVar: 1 },
      ],
    },
  ],
};
const spec = { name: 'tiny', initBatch: 8, maxBatch: 16, minLocalBsz: 2, maxLocalBsz: 2, dataEpochs: 2 };
const truth = createJobTruth(tables, spec);
const ON_4 = 585;
const ON_2 = 900;

type Input = Parameters<typeof runSimulation>[0];
const simulate = (jobs: Input['jobs'], budget?: number, config: Input['config'] = {}) =>
  runSimulation({
    jobs,
    truthOf: () => truth,
    profiles: fakeProfiles({ tiny: 2 }),
    policy: fixedRequestPolicy,
    options: budget === undefined ? {} : { budget },
    traceRatesPerHour: { tiny: 1 },
    config,
  });
const tiny = (name: string, time: number, gpus: number) => traceJob(name, time, 'tiny', gpus);
const HOUR = 3600;
const DAY = 24 * HOUR;

describe('the tiny truth', () => {
  it('runs the whole job in 585 s on 4 GPUs of a node and 900 s on 2, as worked out by hand', () => {
    expect(truth.bestConfigInEpoch([4], 0)).toMatchObject({ totalBatch: 8, accum: 0, goodput: 2 });
    expect(truth.bestConfigInEpoch([4], 1)).toMatchObject({ totalBatch: 16, accum: 1, gain: 2 });
    expect(truth.bestConfigInEpoch([4], 1)?.goodput).toBeCloseTo(2 / 0.95, 12);
    expect(truth.bestConfigInEpoch([2], 0)?.goodput).toBeCloseTo(1.25, 12);
    expect(truth.bestConfigInEpoch([2], 1)).toMatchObject({ totalBatch: 16, accum: 3, gain: 2 });
    expect(secondsToProgress(truth, [4], 0, truth.totalProgress)).toBeCloseTo(ON_4, 9);
    expect(secondsToProgress(truth, [2], 0, truth.totalProgress)).toBeCloseTo(ON_2, 9);
  });
});

describe('case 1: one job, fixed-request, an empty autoscaled cluster', () => {
  /*
   * Arrival 0, request 4. Tick 0: no node; fixed-request wants ceil(4 / 4) = 1 node, paid from 0, ready
   * at 90. Tick 60: still booting. Tick 120: the job gets the node's 4 GPUs, restarts until 150, then
   * 585 s of work: done at 735 (not on a tick: 720 < 735 < 780).
   * JCT 735, queueing 120 (to its first GPU), no rescale (the first start is not one).
   * Allocated: 4 GPUs x (735 - 120) = 2460 GPU-s (the restart holds the GPUs).
   * Paid: 4 GPUs x (735 - 0) = 2940 GPU-s: the bill ends at the last completion, so the node's release at
   * tick 780 and its 30 s lag are not charged.
   * Yardstick: one arrival spans 0 s, read as 1 h: paid 2940 / 3600 = 0.8167 GPU-h per hour, allocated
   * 2460 / 3600 = 0.6833. The peak 24 h window holds the whole bill: 2940 / 86400 per hour.
   * Utilization 2460 / 2940. Interactive (585 s alone at its request <= 20 min): without a GPU for
   * 735 - 615 s held = 120 s.
   */
  const run = simulate([tiny('a', 0, 4)]);

  it('finishes at 735 after 120 s of queueing', () => {
    expect(run.finished).toBe(true);
    expect(run.jobs[0]?.firstStart).toBe(120);
    expect(run.jobs[0]?.completedAt).toBeCloseTo(735, 9);
    expect(run.metrics.avgJctSeconds).toBeCloseTo(735, 9);
    expect(run.metrics.p95JctSeconds).toBeCloseTo(735, 9);
    expect(run.metrics.avgQueueSeconds).toBe(120);
    expect(run.metrics.rescales).toBe(0);
    expect(run.metrics.peakNodes).toBe(1);
  });

  it('allocates 2460 GPU-s, pays 2940, both read over one hour', () => {
    expect(run.jobs[0]?.allocatedGpuSeconds).toBeCloseTo(2460, 9);
    expect(run.metrics.allocatedGpuHoursPerHour).toBeCloseTo(2460 / HOUR, 12);
    expect(run.metrics.paidGpuHoursPerHour).toBeCloseTo(2940 / HOUR, 12);
    expect(run.metrics.peakDayPaidGpuHoursPerHour).toBeCloseTo(2940 / DAY, 12);
    expect(run.metrics.utilizationByType.t4).toBeCloseTo(2460 / 2940, 12);
    expect(run.metrics.arrivalSpanHours).toBe(0);
    expect(run.metrics.spanHours).toBeCloseTo(735 / HOUR, 12);
    expect(run.metrics.interactiveJobs).toBe(1);
    expect(run.metrics.avgInteractiveQueueSeconds).toBeCloseTo(120, 9);
  });

  it('is the same shifted when the trace starts later (ticks count from the first arrival)', () => {
    const later = simulate([tiny('a', 1000, 4)]);
    expect(later.jobs[0]?.firstStart).toBe(1120);
    expect(later.metrics.avgJctSeconds).toBeCloseTo(735, 9);
    expect(later.metrics.paidGpuHoursPerHour).toBeCloseTo(2940 / HOUR, 12);
  });

  it('cuts a request above a budget cap to the cap (budget 4: one node, 8 asked -> 4)', () => {
    const capped = simulate([tiny('a', 0, 8)], 4);
    expect(capped.metrics.avgJctSeconds).toBeCloseTo(735, 9);
    expect(capped.metrics.paidGpuHoursPerHour).toBeCloseTo(2940 / HOUR, 12);
  });
});

describe('case 2: two jobs', () => {
  it('apart: the idle node is released with its lag paid, the later job boots its own', () => {
    /*
     * a as in case 1: done at 735. Tick 780: no job, one node: fixed-request wants 0, the node goes,
     * paid until 780 + 30 = 810. From 840 there is no job and no node: ticks skip to the first at or
     * after 2000 on the 60 s grid, 2040, where b is seen. b's node: asked at 2040, ready at 2130; b starts
     * at tick 2160, restarts to 2190, done at 2190 + 585 = 2775. JCTs 735 and 775; queueing 120 and 160.
     * Paid: 4 x 810 + 4 x (2775 - 2040) = 3240 + 2940 = 6180 GPU-s. Allocated 2 x 2460 = 4920.
     * Arrivals span 2000 s < 1 h: read over 3600 s.
     */
    const run = simulate([tiny('a', 0, 4), tiny('b', 2000, 4)]);
    expect(run.jobs.map((j) => j.firstStart)).toEqual([120, 2160]);
    expect(run.jobs[1]?.completedAt).toBeCloseTo(2775, 9);
    expect(run.metrics.avgJctSeconds).toBeCloseTo((735 + 775) / 2, 9);
    expect(run.metrics.p50JctSeconds).toBeCloseTo(735, 9); // nearest rank: the 1st of 2
    expect(run.metrics.p95JctSeconds).toBeCloseTo(775, 9); // the 2nd of 2
    expect(run.metrics.avgQueueSeconds).toBe(140);
    expect(run.metrics.paidGpuHoursPerHour).toBeCloseTo(6180 / HOUR, 12);
    expect(run.metrics.allocatedGpuHoursPerHour).toBeCloseTo(4920 / HOUR, 12);
    expect(run.metrics.peakNodes).toBe(1);
  });

  it('a day and more apart: spend over the 30 h arrival span, the peak day holding one job', () => {
    /*
     * b at 108000 s (30 h, exactly tick 1800): node asked at 108000, ready 108090, b starts at 108120,
     * done 108735. Paid 3240 (a, as above) + 4 x 735 = 6180 GPU-s over the 108000 s yardstick.
     * a's node is gone at 810 and b's is asked at 108000: 107190 s apart, more than a day, so the most
     * paid in any 24 h is a's 3240 GPU-s.
     */
    const run = simulate([tiny('a', 0, 4), tiny('b', 30 * HOUR, 4)]);
    expect(run.jobs[1]?.firstStart).toBe(108120);
    expect(run.metrics.avgJctSeconds).toBeCloseTo(735, 9);
    expect(run.metrics.arrivalSpanHours).toBe(30);
    expect(run.metrics.paidGpuHoursPerHour).toBeCloseTo(6180 / (30 * HOUR), 12);
    expect(run.metrics.allocatedGpuHoursPerHour).toBeCloseTo(4920 / (30 * HOUR), 12);
    expect(run.metrics.peakDayPaidGpuHoursPerHour).toBeCloseTo(3240 / DAY, 12);
  });

  it('overlapping on one node (budget 4): the second waits for the first, checked queueing', () => {
    /*
     * a at 0, b at 30, both 4 GPUs; the budget caps the cluster at floor(4 / 4) = 1 node. b is seen at
     * tick 60. Tick 120: a takes the node; b does not fit and waits. a is done at 735, its GPUs free at
     * once; the next tick, 780, starts b: restart to 810, done 810 + 585 = 1395.
     * b queues 780 - 30 = 750 s; its JCT is 1395 - 30 = 1365. Averages: JCT (735 + 1365) / 2 = 1050,
     * queueing (120 + 750) / 2 = 435. Paid: the one node from 0 to 1395: 4 x 1395 = 5580 GPU-s;
     * allocated 2 x 2460 = 4920; over one hour.
     */
    const run = simulate([tiny('a', 0, 4), tiny('b', 30, 4)], 4);
    expect(run.jobs.map((j) => j.firstStart)).toEqual([120, 780]);
    expect(run.jobs[1]?.completedAt).toBeCloseTo(1395, 9);
    expect(run.metrics.avgJctSeconds).toBeCloseTo(1050, 9);
    expect(run.metrics.p95JctSeconds).toBeCloseTo(1365, 9);
    expect(run.metrics.avgQueueSeconds).toBe(435);
    expect(run.metrics.paidGpuHoursPerHour).toBeCloseTo(5580 / HOUR, 12);
    expect(run.metrics.allocatedGpuHoursPerHour).toBeCloseTo(4920 / HOUR, 12);
    expect(run.metrics.utilizationByType.t4).toBeCloseTo(4920 / 5580, 12);
  });

  it('three on one node: no backfill behind a job that does not fit (gang, first come first served)', () => {
    /*
     * a (2 GPUs), b (4), c (2), all at 0, one node (budget 4). Tick 120: a takes 2 GPUs; b needs 4 of
     * the 2 left and waits, and c waits behind b though 2 GPUs are free. a: 150 + 900 = 1050.
     * Tick 1080: b, done 1110 + 585 = 1695. Tick 1740: c, done 1770 + 900 = 2670.
     * JCTs 1050, 1695, 2670 (average 1805); queueing 120, 1080, 1740 (average 980).
     * Paid: one node 0..2670, 4 x 2670 = 10680 GPU-s. Allocated: 2 x 930 + 4 x 615 + 2 x 930 = 6180.
     */
    const run = simulate([tiny('a', 0, 2), tiny('b', 0, 4), tiny('c', 0, 2)], 4);
    expect(run.jobs.map((j) => j.firstStart)).toEqual([120, 1080, 1740]);
    expect(run.metrics.avgJctSeconds).toBeCloseTo(1805, 9);
    expect(run.metrics.p50JctSeconds).toBeCloseTo(1695, 9);
    expect(run.metrics.avgQueueSeconds).toBe(980);
    expect(run.metrics.paidGpuHoursPerHour).toBeCloseTo(10680 / HOUR, 12);
    expect(run.metrics.allocatedGpuHoursPerHour).toBeCloseTo(6180 / HOUR, 12);
  });

  it('the same three without a cap: two nodes, all at once, the emptied node released', () => {
    /*
     * ceil((2 + 4 + 2) / 4) = 2 nodes asked at 0. Tick 120: b takes a node alone, a and c share the other
     * (best fit). b done at 735, a and c at 150 + 900 = 1050. Tick 780: fixed-request wants
     * ceil(4 / 4) = 1 node: b's, empty, goes, paid to 810. Paid 4 x 810 + 4 x 1050 = 7440 GPU-s.
     * Allocated as before, 6180.
     */
    const run = simulate([tiny('a', 0, 2), tiny('b', 0, 4), tiny('c', 0, 2)]);
    expect(run.jobs.map((j) => j.firstStart)).toEqual([120, 120, 120]);
    expect(run.metrics.avgJctSeconds).toBeCloseTo((1050 + 735 + 1050) / 3, 9);
    expect(run.metrics.peakNodes).toBe(2);
    expect(run.metrics.paidGpuHoursPerHour).toBeCloseTo(7440 / HOUR, 12);
    expect(run.metrics.allocatedGpuHoursPerHour).toBeCloseTo(6180 / HOUR, 12);
  });

  // Progress is summed interval by interval; when the work ends exactly on a tick the sum can fall a few
  // ulps short of the total, which once put the finish just after the tick (1020.0000000000003) and
  // reused the GPUs a whole tick late (job.ts advance: a finish is now within a relative 1e-12).
  it('a job whose work ends exactly on a tick frees its GPUs for that tick (tick 15 s)', () => {
    /*
     * a (2 GPUs) and b (4) at 0, one node (budget 4), ticks every 15 s. The node is ready at 90, a tick:
     * a starts at 90, restarts to 120, runs 900 s: done at 1020 = tick 68. b starts at that tick:
     * done 1020 + 30 + 585 = 1635. Paid: one node 0..1635, 4 x 1635 = 6540 GPU-s.
     */
    const run = simulate([tiny('a', 0, 2), tiny('b', 0, 4)], 4, { tickSeconds: 15 });
    expect(run.jobs[0]?.completedAt).toBeCloseTo(1020, 9);
    expect(run.jobs[1]?.firstStart).toBe(1020);
    expect(run.metrics.paidGpuHoursPerHour).toBeCloseTo(6540 / HOUR, 12);
  });
});

describe('bad trace input', () => {
  const header = 'name,time,application,num_replicas,batch_size';
  const parse = (row: string) => () => parseTrace(`${header}\n${row}\n`, 't.csv');

  it('the CSV reader refuses a negative time, zero or fractional replicas and non-numbers, naming line and column', () => {
    expect(parse('a,-5,tiny,4,8')).toThrow('t.csv line 2: time must be a non-negative number, got "-5"');
    expect(parse('a,0,tiny,0,8')).toThrow('t.csv line 2: num_replicas must be a positive integer, got "0"');
    expect(parse('a,0,tiny,-2,8')).toThrow(/num_replicas must be a positive integer, got "-2"/);
    expect(parse('a,0,tiny,2.5,8')).toThrow(/num_replicas must be a positive integer, got "2.5"/);
    expect(parse('a,soon,tiny,4,8')).toThrow(/line 2: time must be a non-negative number, got "soon"/);
    expect(parse('a,Infinity,tiny,4,8')).toThrow(/time must be a non-negative number, got "Infinity"/);
    expect(parse('a,1e400,tiny,4,8')).toThrow(/time must be a non-negative number, got "1e400"/);
    expect(parse('a,,tiny,4,8')).toThrow(/time must be a non-negative number, got ""/);
    expect(parse('a,0,tiny,4,abc')).toThrow(/batch_size must be a positive integer, got "abc"/);
    expect(parse('a,0,,4,8')).toThrow('t.csv line 2: application is empty');
  });

  it('an unknown application is refused by name, with the ones known', () => {
    expect(() => simulate([traceJob('a', 0, 'resnet', 4)])).toThrow(
      'no profile for application "resnet"; the profiles have: tiny',
    );
    expect(() => truthProvider('/nonexistent')('resnet')).toThrow(UnknownAppError);
    expect(() => truthProvider('/nonexistent')('resnet')).toThrow(
      /no measured data for application "resnet"; known: bert/,
    );
  });

  // Every command reads traces through parseTrace, which refuses these; a trace built in code is checked
  // by the engine too (an infinite arrival once ran the first job and reported the run unfinished, paying 0).
  it('the engine refuses a job whose arrival or width is not one, naming it', () => {
    expect(() => simulate([tiny('a', 0, 4), tiny('b', Number.POSITIVE_INFINITY, 4)])).toThrow(
      'trace job "b": arrival time must be a finite number of seconds >= 0, got Infinity',
    );
    expect(() => simulate([tiny('a', Number.NaN, 4)])).toThrow(/"a": arrival time .* got NaN/);
    expect(() => simulate([tiny('a', -1, 4)])).toThrow(/"a": arrival time .* got -1/);
    expect(() => simulate([tiny('a', 0, 0)])).toThrow(
      'trace job "a": num_replicas must be a positive integer, got 0',
    );
  });
});
