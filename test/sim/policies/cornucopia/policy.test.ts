import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cornucopiaPolicy } from '../../../../src/sim/policies/cornucopia/index.ts';
import { CornucopiaScheduler } from '../../../../src/sim/policies/cornucopia/scheduler.ts';
import type { Allocation, JobView, NodeView } from '../../../../src/sim/policy.ts';
import { clusterView, gpusPerNodeUsed, nodes } from '../fakes.ts';
import { context, jobView } from './fakes.ts';

const widthsOf = (allocations: ReadonlyMap<number, Allocation>) =>
  Object.fromEntries([...allocations].map(([id, a]) => [id, a.length]));

describe('cornucopia', () => {
  it('refuses a missing or invalid budget, saying what is allowed', () => {
    for (const budget of [undefined, 0, 0.5, Number.NaN]) {
      expect(() => cornucopiaPolicy.create(context(), budget === undefined ? {} : { budget })).toThrow(
        /cornucopia runs on a fixed cluster: give its size as --budget, a number of GPUs >= 1, got/,
      );
    }
    expect(cornucopiaPolicy.mode).toBe('fixed');
    expect(cornucopiaPolicy.knob).toBe('budget');
  });

  it('gives an interactive job its request, and a batch job up to twice its request', () => {
    const scheduler = new CornucopiaScheduler(context());
    const view = clusterView(nodes(4));
    const interactive = jobView(1, { kind: 'interactive', requestedGpus: 3 });
    expect(widthsOf(scheduler.decide(view, [interactive]).allocations)).toEqual({ 1: 3 });
    const batch = jobView(2, { app: 'long', kind: 'batch', requestedGpus: 3 });
    expect(widthsOf(new CornucopiaScheduler(context()).decide(view, [batch]).allocations)).toEqual({
      2: 6,
    });
  });

  it('labels a view without a kind by the 20-minute rule on its profile', () => {
    const scheduler = new CornucopiaScheduler(context());
    expect(scheduler.kind(jobView(1))).toBe('interactive'); // "short": 10 minutes
    expect(scheduler.kind(jobView(2, { app: 'long' }))).toBe('batch'); // 6 hours on 1 GPU
    expect(scheduler.kind(jobView(3, { app: 'long', kind: 'interactive' }))).toBe('interactive');
  });

  it('takes GPUs from a running batch job for an arriving interactive one, shrinking it', () => {
    // A batch job holds all 8 GPUs (its request is 4, profiled to 8); an interactive job asking 3
    // arrives: the batch job gives up 3 and keeps 5.
    const scheduler = new CornucopiaScheduler(context());
    const wide = jobView(1, {
      app: 'long',
      kind: 'batch',
      requestedGpus: 4,
      runSeconds: 600,
      allocation: [0, 0, 0, 0, 1, 1, 1, 1],
    });
    const decision = scheduler.decide(clusterView(nodes(2)), [
      wide,
      jobView(2, { kind: 'interactive', requestedGpus: 3, arrival: 3600 }),
    ]);
    expect(widthsOf(decision.allocations)).toEqual({ 1: 5, 2: 3 });
  });

  it('profiles a job once, in the epoch it starts in', () => {
    // "long" is linear in epoch 0 and gains nothing past 2 GPUs in epoch 1.
    const scheduler = new CornucopiaScheduler(context());
    const view = clusterView(nodes(2));
    const first = jobView(1, { app: 'long', kind: 'batch', requestedGpus: 3 });
    expect(widthsOf(scheduler.decide(view, [first]).allocations)).toEqual({ 1: 6 });
    const later = { ...first, statEpoch: 1, progressFraction: 0.6, allocation: [] };
    expect(widthsOf(scheduler.decide(view, [later]).allocations)).toEqual({ 1: 6 });
    // A job first seen in epoch 1 is profiled there: past 2 GPUs nothing is gained, so it gets its
    // request and no more.
    const fresh = new CornucopiaScheduler(context());
    expect(widthsOf(fresh.decide(view, [{ ...later, id: 2 }]).allocations)).toEqual({ 2: 3 });
  });

  it('demotes a long-running interactive job below a fresh one', () => {
    const one = clusterView(nodes(1, { gpus: 1 }));
    const scheduler = new CornucopiaScheduler(context());
    const first = jobView(1, { kind: 'interactive', arrival: 0 });
    const second = jobView(2, { kind: 'interactive', arrival: 100 });
    scheduler.onArrival(first);
    scheduler.onArrival(second);
    expect(widthsOf(scheduler.decide(one, [first, second]).allocations)).toEqual({ 1: 1 });
    // Both are 10-minute jobs by their profile: past 20 minutes of running, job 1 falls to Queue 2,
    // and Queue 1's job 2 takes the GPU.
    const long = { ...first, runSeconds: 1201, allocation: [0] };
    expect(widthsOf(scheduler.decide(one, [long, second]).allocations)).toEqual({ 2: 1 });
  });

  it('uses only ready nodes and never more GPUs than they have, over rounds of random jobs', () => {
    const job = fc.record({
      app: fc.constantFrom('short', 'long', 'flat'),
      kind: fc.constantFrom<'interactive' | 'batch'>('interactive', 'batch'),
      requestedGpus: fc.integer({ min: 1, max: 8 }),
      runSeconds: fc.constantFrom(0, 5000, 50_000),
    });
    const rounds = fc.array(fc.record({ arrivals: fc.array(job, { maxLength: 4 }), finish: fc.nat(3) }), {
      minLength: 1,
      maxLength: 6,
    });
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4 }), fc.nat(2), rounds, (ready, booting, plan) => {
        const nodeViews: NodeView[] = [
          ...nodes(ready),
          ...nodes(booting, { ready: false, readyAt: 1e9 }, ready),
        ];
        const scheduler = new CornucopiaScheduler(context());
        let jobs: JobView[] = [];
        let nextId = 0;
        plan.forEach((round, t) => {
          for (const done of jobs.slice(0, round.finish)) scheduler.onCompletion(done);
          jobs = jobs.slice(round.finish);
          for (const fields of round.arrivals) jobs.push(jobView(nextId++, { ...fields, arrival: t * 60 }));
          const decision = scheduler.decide(clusterView(nodeViews, { now: t * 60 }), jobs);
          const used = gpusPerNodeUsed(decision.allocations);
          for (const [id, gpus] of used) {
            expect(id).toBeLessThan(ready);
            expect(gpus).toBeLessThanOrEqual(4);
          }
          // A job waits only when every GPU is given out.
          const total = [...used.values()].reduce((s, g) => s + g, 0);
          if (jobs.some((j) => !decision.allocations.has(j.id))) expect(total).toBe(ready * 4);
          jobs = jobs.map((j) => ({ ...j, allocation: decision.allocations.get(j.id) ?? [] }));
        });
      }),
      { numRuns: 200 },
    );
  });
});
