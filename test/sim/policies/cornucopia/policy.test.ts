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

  it('serves a job demoted by its attained service after a fresh one (MLFQ)', () => {
    const one = clusterView(nodes(1, { gpus: 1 }));
    const scheduler = new CornucopiaScheduler(context());
    // Both interactive and fresh: first come, first served within Q0.
    const first = jobView(1, { arrival: 0 });
    const second = jobView(2, { arrival: 100 });
    expect(widthsOf(scheduler.decide(one, [first, second]).allocations)).toEqual({ 1: 1 });
    // Job 1 has had 1 GPU-hour: demoted to Q1, it gives the GPU to job 2.
    const demoted = { ...first, attainedGpuSeconds: 3600, allocation: [0] };
    expect(widthsOf(scheduler.decide(one, [demoted, second]).allocations)).toEqual({ 2: 1 });
  });

  it('starts batch jobs below interactive ones', () => {
    const one = clusterView(nodes(1, { gpus: 1 }));
    const batch = jobView(1, { app: 'long', arrival: 0 });
    const interactive = jobView(2, { arrival: 100 });
    expect(
      widthsOf(new CornucopiaScheduler(context()).decide(one, [batch, interactive]).allocations),
    ).toEqual({
      2: 1,
    });
  });

  it('shrinks a running lower-queue job for a new higher-queue one instead of stopping it', () => {
    // A batch job in Q2 holds all 8 GPUs when an interactive job arrives. One GPU each; the Q0 job grows
    // to 4 (ratios 2, 1.5, 1.33; its next step, to 8, needs 4 GPUs and 3 are left); the Q2 job gets the
    // other 3 back in its turn: shrunk from 8 to 4, not stopped.
    const wide = jobView(1, {
      app: 'long',
      attainedGpuSeconds: 40_000,
      allocation: [0, 0, 0, 0, 1, 1, 1, 1],
    });
    const decision = new CornucopiaScheduler(context()).decide(clusterView(nodes(2)), [
      wide,
      jobView(2, { arrival: 3600 }),
    ]);
    expect(widthsOf(decision.allocations)).toEqual({ 1: 4, 2: 4 });
  });

  it("reads the speedups of the job's current epoch", () => {
    // "long" scales linearly in epoch 0 (8 GPUs) but gains nothing past 2 GPUs in epoch 1.
    const scheduler = new CornucopiaScheduler(context());
    const view = clusterView(nodes(2));
    expect(widthsOf(scheduler.decide(view, [jobView(1, { app: 'long' })]).allocations)).toEqual({ 1: 8 });
    const later = jobView(1, { app: 'long', statEpoch: 1, progressFraction: 0.6 });
    expect(widthsOf(scheduler.decide(view, [later]).allocations)).toEqual({ 1: 2 });
  });

  it('uses only ready nodes and never more GPUs than they have, over rounds of random jobs', () => {
    const job = fc.record({
      app: fc.constantFrom('short', 'long', 'flat'),
      attainedGpuSeconds: fc.constantFrom(0, 5000, 50_000),
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
          jobs = jobs.slice(round.finish);
          for (const fields of round.arrivals) jobs.push(jobView(nextId++, { ...fields, arrival: t * 60 }));
          const decision = scheduler.decide(clusterView(nodeViews, { now: t * 60 }), jobs);
          const used = gpusPerNodeUsed(decision.allocations);
          for (const [id, gpus] of used) {
            expect(id).toBeLessThan(ready);
            expect(gpus).toBeLessThanOrEqual(4);
          }
          // Work-conserving admission: a job waits only when every GPU is given out.
          const total = [...used.values()].reduce((s, g) => s + g, 0);
          if (jobs.some((j) => !decision.allocations.has(j.id))) expect(total).toBe(ready * 4);
          jobs = jobs.map((j) => ({ ...j, allocation: decision.allocations.get(j.id) ?? [] }));
        });
      }),
      { numRuns: 200 },
    );
  });
});
