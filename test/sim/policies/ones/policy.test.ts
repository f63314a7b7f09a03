import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseProfileFile } from '../../../../src/core/profile.ts';
import { parseTrace } from '../../../../src/core/trace.ts';
import type { TickSnapshot } from '../../../../src/sim/engine/engine.ts';
import { onesPolicy } from '../../../../src/sim/policies/ones/index.ts';
import { simulate, truthProvider } from '../../../../src/sim/run.ts';
import { POLLUX, REPO } from '../../../helpers/run-script.ts';
import { jobView } from '../fakes.ts';
import { clusterView, context } from './fakes.ts';

describe('ones', () => {
  it('refuses a missing or invalid budget, saying what is allowed', () => {
    expect(() => onesPolicy.create(context(), {})).toThrow(
      /ones: .*--budget, a positive number of GPUs.*got none/,
    );
    expect(() => onesPolicy.create(context(), { budget: -4 })).toThrow(/got -4/);
  });

  it('starts every new job on one GPU when there is room', () => {
    const policy = onesPolicy.create(context(), { budget: 8 });
    const jobs = [1, 2, 3].map((id) => jobView(id, { arrival: id }));
    const decision = policy.decide(clusterView(2), jobs);
    expect([1, 2, 3].map((id) => decision.allocations.get(id)?.length)).toEqual([1, 1, 1]);
  });

  describe('on the first 40 jobs of workload-1 (cifar10, bert, deepspeech2) at 16 GPUs', () => {
    const profiles = parseProfileFile(JSON.parse(readFileSync(resolve(REPO, 'data/profiles.json'), 'utf8')));
    const trace = parseTrace(readFileSync(resolve(POLLUX, 'workloads/workload-1.csv'), 'utf8'))
      .filter((j) => ['cifar10', 'bert', 'deepspeech2'].includes(j.application))
      .slice(0, 40);
    const run = (seed: number) => {
      const ticks: TickSnapshot[] = [];
      const out = simulate({
        trace,
        policy: 'ones',
        options: { budget: 16 },
        seed,
        profiles,
        truthOf: truthProvider(POLLUX),
        observer: (tick) => ticks.push(tick),
      });
      return { ...out, ticks };
    };
    const first = run(5);

    it('finishes every job; a running job at most doubles or halves per tick, never past 4x its request', () => {
      expect(first.result.completed).toBe(trace.length);
      const requested = new Map(trace.map((job, id) => [id, job.numReplicas]));
      let changes = 0;
      for (let t = 1; t < first.ticks.length; t++) {
        const before = (first.ticks[t - 1] as TickSnapshot).allocations;
        for (const [id, allocation] of (first.ticks[t] as TickSnapshot).allocations) {
          const was = before.get(id)?.length ?? 0;
          const now = allocation.length;
          expect(now).toBeLessThanOrEqual(4 * Math.max(1, requested.get(id) as number));
          if (was > 0 && now > 0 && now !== was) {
            changes++;
            expect(now).toBeGreaterThanOrEqual(Math.ceil(was / 2));
            expect(now).toBeLessThanOrEqual(2 * was);
          }
        }
      }
      expect(changes).toBeGreaterThan(10);
    });

    it('is deterministic for a seed', () => {
      const again = run(5);
      expect({ ...again.result, simMs: 0 }).toEqual({ ...first.result, simMs: 0 });
    });
  });
});
