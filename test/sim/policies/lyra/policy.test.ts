import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lyraPolicy } from '../../../../src/sim/policies/lyra/index.ts';
import { LyraScheduler } from '../../../../src/sim/policies/lyra/scheduler.ts';
import type { Allocation, JobView, NodeView } from '../../../../src/sim/policy.ts';
import { clusterView, gpusPerNodeUsed, jobView, nodes } from '../fakes.ts';
import { context } from './fakes.ts';

const widthsOf = (allocations: ReadonlyMap<number, Allocation>) =>
  Object.fromEntries([...allocations].map(([id, a]) => [id, a.length]));

describe('lyra', () => {
  it('refuses a missing or invalid budget, saying what is allowed', () => {
    for (const budget of [undefined, 0, -4, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => lyraPolicy.create(context(), budget === undefined ? {} : { budget })).toThrow(
        /lyra runs on a fixed cluster: give its size as --budget, a number of GPUs >= 1, got/,
      );
    }
    expect(lyraPolicy.mode).toBe('fixed');
    expect(lyraPolicy.knob).toBe('budget');
  });

  it('admits bases shortest job first: the longest job waits even though it came first', () => {
    // "lin" jobs asking 4 GPUs each on 8 GPUs; job 1 has all 2400 s of 1-GPU work left, jobs 2 and 3 less.
    const jobs = [
      jobView(1, { requestedGpus: 4, arrival: 0 }),
      jobView(2, { requestedGpus: 4, arrival: 10, progressFraction: 0.5, statEpoch: 1 }),
      jobView(3, { requestedGpus: 4, arrival: 20, progressFraction: 0.25 }),
    ];
    const decision = new LyraScheduler(context()).decide(clusterView(nodes(2)), jobs);
    expect(widthsOf(decision.allocations)).toEqual({ 2: 4, 3: 4 });
  });

  it('gives the spare GPUs to the job whose JCT they cut most', () => {
    // 6 GPUs; bases 2 + 2, 2 spare. Job 1 (2400 s on 1 GPU): 2 -> 4 GPUs saves 1200 - 600 = 600 s.
    // Job 2 (600 s left): 300 - 150 = 150 s. The spare pair goes to job 1.
    const jobs = [
      jobView(1, { requestedGpus: 2 }),
      jobView(2, { requestedGpus: 2, progressFraction: 0.75, statEpoch: 1 }),
    ];
    const view = clusterView([...nodes(1), ...nodes(1, { gpus: 2 }, 1)]);
    const decision = new LyraScheduler(context()).decide(view, jobs);
    expect(widthsOf(decision.allocations)).toEqual({ 1: 4, 2: 2 });
  });

  it('gives no extra GPU to a job they do not speed up', () => {
    const decision = new LyraScheduler(context()).decide(clusterView(nodes(1)), [
      jobView(1, { app: 'flat' }),
    ]);
    expect(widthsOf(decision.allocations)).toEqual({ 1: 1 });
  });

  it('caps a base at the cluster size, and uses only ready nodes', () => {
    const view = clusterView([...nodes(2), ...nodes(2, { ready: false, readyAt: 9999 }, 2)]);
    const decision = new LyraScheduler(context()).decide(view, [jobView(1, { requestedGpus: 12 })]);
    expect(decision.allocations.get(1)).toEqual([0, 0, 0, 0, 1, 1, 1, 1]);
  });

  it('keeps a running job at its width unless a change saves more than the change charge', () => {
    // 600 s of 1-GPU work left, on 2 GPUs (300 s): 8 GPUs (75 s) would save 225 s, 4 GPUs 150 s, both
    // less than 10 restarts (300 s): it stays put.
    const running = jobView(1, {
      requestedGpus: 2,
      progressFraction: 0.75,
      statEpoch: 1,
      allocation: [1, 1],
    });
    const scheduler = new LyraScheduler(context());
    expect(scheduler.decide(clusterView(nodes(2)), [running]).allocations.get(1)).toEqual([1, 1]);
    // Charged a single restart (30 s), the 225 s are worth it.
    const eager = new LyraScheduler(context(), { restartCharge: 1 });
    expect(eager.decide(clusterView(nodes(2)), [running]).allocations.get(1)).toHaveLength(8);
    // With the whole job left (1200 s on 2 GPUs, 300 s on 8), the 900 s saved are worth the charge.
    const fresh = { ...running, progressFraction: 0, statEpoch: 0 };
    expect(scheduler.decide(clusterView(nodes(2)), [fresh]).allocations.get(1)).toHaveLength(8);
  });

  it("reclaims extra GPUs for a new job's base, but never a running job's base", () => {
    // Job 1 runs on all 8 GPUs (base 2). Job 2 arrives asking 4: job 1 shrinks to make room.
    const wide = jobView(1, { requestedGpus: 2, allocation: [0, 0, 0, 0, 1, 1, 1, 1] });
    const decision = new LyraScheduler(context()).decide(clusterView(nodes(2)), [
      wide,
      jobView(2, { requestedGpus: 4, arrival: 3600 }),
    ]);
    expect(widthsOf(decision.allocations)).toEqual({ 1: 4, 2: 4 });
    // A running job on its base is not stopped for a shorter arrival that does not fit.
    const based = jobView(1, { requestedGpus: 8, allocation: [0, 0, 0, 0, 1, 1, 1, 1] });
    const short = jobView(2, { requestedGpus: 1, progressFraction: 0.9, statEpoch: 1, arrival: 3600 });
    const kept = new LyraScheduler(context()).decide(clusterView(nodes(2)), [based, short]);
    expect(widthsOf(kept.allocations)).toEqual({ 1: 8 });
  });

  it('never gives out more GPUs than the ready nodes have, over rounds of random jobs', () => {
    const job = fc.record({
      app: fc.constantFrom('lin', 'flat'),
      requestedGpus: fc.integer({ min: 1, max: 12 }),
      progressFraction: fc.double({ min: 0, max: 0.99, noNaN: true }),
    });
    const rounds = fc.array(fc.record({ arrivals: fc.array(job, { maxLength: 4 }), finish: fc.nat(3) }), {
      minLength: 1,
      maxLength: 6,
    });
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5 }), fc.nat(2), rounds, (ready, booting, plan) => {
        const nodeViews: NodeView[] = [
          ...nodes(ready),
          ...nodes(booting, { ready: false, readyAt: 1e9 }, ready),
        ];
        const scheduler = new LyraScheduler(context());
        let jobs: JobView[] = [];
        let nextId = 0;
        plan.forEach((round, t) => {
          jobs = jobs.slice(round.finish);
          for (const fields of round.arrivals) {
            const statEpoch = fields.app === 'lin' && fields.progressFraction >= 0.5 ? 1 : 0;
            jobs.push(jobView(nextId++, { ...fields, statEpoch, arrival: t * 60 }));
          }
          const decision = scheduler.decide(clusterView(nodeViews, { now: t * 60 }), jobs);
          const used = gpusPerNodeUsed(decision.allocations);
          for (const [id, gpus] of used) {
            expect(id).toBeLessThan(ready); // ready nodes are 0..ready-1
            expect(gpus).toBeLessThanOrEqual(4);
          }
          // Every job that runs has at least its base (its request, capped to the cluster).
          for (const j of jobs) {
            const width = decision.allocations.get(j.id)?.length ?? 0;
            if (width > 0) expect(width).toBeGreaterThanOrEqual(Math.min(j.requestedGpus, ready * 4));
          }
          jobs = jobs.map((j) => ({ ...j, allocation: decision.allocations.get(j.id) ?? [] }));
        });
      }),
      { numRuns: 200 },
    );
  });
});
