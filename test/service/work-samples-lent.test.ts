/**
 * An epoch a job ran on GPUs the idle fill lent it is a work sample like any (src/service/progress.ts
 * recordWorkSample), at the width it ran: with the fill a default, a lone job runs lent most of its
 * life, and before 2026-12-02 such epochs fed neither the work estimates nor the learned speedups.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { sampleWork } from '../../src/service/work-samples.ts';
import { startService } from './harness.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

const WORK = 3600;
const MYMODEL = {
  name: 'mymodel',
  weight: 1,
  rescaleSeconds: 30,
  epochs: [{ workSeconds: WORK, speedup: { '1': 1, '2': 1.9, '4': 3.6 } }],
};

describe('work samples', () => {
  it('are taken at the width a job ran on, the GPUs lent to it included', async () => {
    const s = await startService({
      config: {
        tickSeconds: 60,
        local: { maxNodes: 8, bootSeconds: 0, releaseSeconds: 0 },
        budget: 8,
        creditSpendHours: 0,
      },
    });
    cleanups.push(s.close);
    s.service.putClass(MYMODEL, 8);
    await s.service.planner.idle();
    const { job, token } = s.service.registerJob('mymodel', 'a');
    await s.ticks(3);
    // The plan gives it 1 GPU (8 an hour at a budget of 8); the fill lends it its node's other 3.
    expect(job.widths?.[0]).toBe(1);
    expect([job.allocation.length, job.idleFillGpus]).toEqual([4, 3]);
    s.clock.t = job.epochStartedAt! + (30 + WORK / 3.6) * 1000;
    const done = await s.request('POST', `/v1/jobs/${job.id}/complete`, undefined, token);
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    const samples = s.service.state.classes.get('mymodel')!.workSamples[0] ?? [];
    expect(samples).toHaveLength(1);
    expect(samples[0]).toMatchObject({ width: 4 });
    expect(sampleWork(samples[0]!)).toBeCloseTo(WORK, 0);
  }, 60_000);
});
