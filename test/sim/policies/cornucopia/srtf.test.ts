import { describe, expect, it } from 'vitest';
import {
  SrtfScheduler,
  srtfPolicy,
  srtfPriorityPolicy,
} from '../../../../src/sim/policies/cornucopia/srtf.ts';
import type { Allocation } from '../../../../src/sim/policy.ts';
import { clusterView, nodes } from '../fakes.ts';
import { context, jobView } from './fakes.ts';

const widthsOf = (allocations: ReadonlyMap<number, Allocation>) =>
  Object.fromEntries([...allocations].map(([id, a]) => [id, a.length]));

// "short": 600 s on 1 GPU, linear; "long": 21,600 s on 1 GPU, linear in its first half.
describe('srtf and srtf-priority (the Cornucopia paper, section 5.1 and Fig. 1)', () => {
  it('refuses a missing or invalid budget, saying what is allowed', () => {
    for (const policy of [srtfPolicy, srtfPriorityPolicy]) {
      expect(() => policy.create(context(), {})).toThrow(
        new RegExp(`${policy.name} runs on a fixed cluster: give its size as --budget`),
      );
    }
  });

  it('runs the job with the least remaining time at its request first, preempting a longer one whole', () => {
    const view = clusterView(nodes(1));
    const running = jobView(1, { app: 'long', kind: 'batch', requestedGpus: 4, allocation: [0, 0, 0, 0] });
    const shorter = jobView(2, { kind: 'batch', requestedGpus: 2, arrival: 100 });
    const decision = new SrtfScheduler(context(), false).decide(view, [running, shorter]);
    expect(widthsOf(decision.allocations)).toEqual({ 2: 2 });
  });

  it('ranks by remaining time, not by the whole job: a long job nearly done goes first', () => {
    const view = clusterView(nodes(1));
    // 1% of "long" left at 4 GPUs: 54 s; "short" at 4 GPUs: 150 s.
    const nearlyDone = jobView(1, {
      app: 'long',
      kind: 'batch',
      requestedGpus: 4,
      progressFraction: 0.99,
      statEpoch: 1,
    });
    const fresh = jobView(2, { kind: 'batch', requestedGpus: 4, arrival: 100 });
    const decision = new SrtfScheduler(context(), false).decide(view, [fresh, nearlyDone]);
    expect(widthsOf(decision.allocations)).toEqual({ 1: 4 });
  });

  it('lets a smaller job start when the next in line does not fit (backfill), each at its request', () => {
    const view = clusterView(nodes(2));
    const jobs = [
      jobView(1, { kind: 'batch', requestedGpus: 5 }),
      jobView(2, { kind: 'batch', requestedGpus: 6, arrival: 10 }),
      jobView(3, { app: 'long', kind: 'batch', requestedGpus: 3, arrival: 20 }),
    ];
    // "short" lists no width between 4 and 8, so jobs 1 and 2 both have 150 s left: job 1 (earlier)
    // takes 5 GPUs, job 2 (6) does not fit in the 3 left, and job 3 (the longest) starts on them.
    expect(widthsOf(new SrtfScheduler(context(), false).decide(view, jobs).allocations)).toEqual({
      1: 5,
      3: 3,
    });
    // A request above the cluster runs on the whole cluster.
    const huge = [jobView(4, { kind: 'batch', requestedGpus: 64 })];
    expect(widthsOf(new SrtfScheduler(context(), false).decide(view, huge).allocations)).toEqual({ 4: 8 });
  });

  it('srtf-priority puts every interactive job ahead of every batch job', () => {
    const view = clusterView(nodes(1));
    // The batch job is the shorter one (nearly done), yet the interactive job goes first.
    const batch = jobView(1, { kind: 'batch', requestedGpus: 4, progressFraction: 0.9 });
    const interactive = jobView(2, { app: 'long', kind: 'interactive', requestedGpus: 4, arrival: 100 });
    expect(
      widthsOf(new SrtfScheduler(context(), true).decide(view, [batch, interactive]).allocations),
    ).toEqual({
      2: 4,
    });
    expect(
      widthsOf(new SrtfScheduler(context(), false).decide(view, [batch, interactive]).allocations),
    ).toEqual({
      1: 4,
    });
  });
});
