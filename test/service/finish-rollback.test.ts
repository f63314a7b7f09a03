/**
 * A job's end whose store transaction fails (SQLITE_FULL, an I/O error) leaves no trace in memory: the
 * job is still active as the store says, its GPUs still count as allocated, and the class has not
 * learned the epoch's work twice when the end is reported again and saved.
 */
import { describe, expect, it } from 'vitest';
import { finishJob } from '../../src/service/job-operations.ts';
import { startService } from './harness.ts';
import { failOnce } from '../helpers/fail-once.ts';

describe("a job's end whose transaction rolls back", () => {
  it('leaves the job active in memory as in the store, and a second report ends it once', async () => {
    const boa = await startService({
      config: { tickSeconds: 60, local: { maxNodes: 8, bootSeconds: 0, releaseSeconds: 0 }, budget: 40 },
    });
    try {
      const { service, repo } = boa;
      // A class of one epoch (cifar10's first): a job that ends in its last epoch teaches the class it.
      const cifar10 = service.state.classes.get('cifar10')!.profile;
      service.putClass({ ...cifar10, name: 'one', epochs: cifar10.epochs.slice(0, 1) }, 1);
      await service.planner.idle();
      const { job } = service.registerJob('one', 'a');
      await boa.ticks(3);
      expect(job.state).toBe('running');
      // As long as its first epoch takes at its width: a clean epoch, whose end the class learns from.
      const profile = service.state.classes.get('one')!.profile;
      const epoch = profile.epochs[0]!;
      const speedup = epoch.speedup[String(job.allocation.length)]!;
      boa.clock.advance(profile.rescaleSeconds + epoch.workSeconds / speedup);
      const allocated = service.state.allocatedGpus;
      const before = {
        allocation: job.allocation,
        width: job.width,
        generation: job.generation,
        generationSince: job.generationSince,
      };
      const samples = JSON.stringify(service.state.classes.get('one')!.workSamples);

      failOnce(repo, 'saveJobState');
      expect(() => finishJob(service, job, 'done')).toThrow('SQLITE_FULL');
      expect(service.state.jobs.get(job.id)).toBe(job);
      expect({ state: job.state, finishedAt: job.finishedAt }).toEqual({
        state: 'running',
        finishedAt: null,
      });
      // generationSince too (found in review): a later save would store the failed end's time as when
      // the generation began, and an older exit before it would read as the job's end.
      expect({
        allocation: job.allocation,
        width: job.width,
        generation: job.generation,
        generationSince: job.generationSince,
      }).toEqual(before);
      expect(service.state.allocatedGpus).toBe(allocated);
      expect(JSON.stringify(service.state.classes.get('one')!.workSamples)).toBe(samples);
      expect(repo.getJob(job.id)!.state).toBe('running');

      finishJob(service, job, 'done');
      expect(repo.getJob(job.id)!.state).toBe('done');
      // The end that committed taught the class its epoch, once.
      const learned = service.state.classes.get('one')!.workSamples[0]!;
      expect(learned.length).toBe((JSON.parse(samples) as number[][])[0]!.length + 1);
      expect(service.state.jobs.has(job.id)).toBe(false);
      expect(service.state.allocatedGpus).toBe(allocated - before.allocation.length);
    } finally {
      await boa.close();
    }
  }, 60_000);
});
