/**
 * A tick whose store transaction fails (SQLITE_FULL, an I/O error) leaves no trace in memory either:
 * the jobs it moved and the allocation interval it closed go back to what the store holds, so the next
 * tick decides them again and saves them. Before, the jobs kept their new allocation in memory only,
 * the placement counted them as settled and never saved them, and the ledger lost the interval.
 */
import { describe, expect, it } from 'vitest';
import { startService } from './harness.ts';
import { failOnce } from '../helpers/fail-once.ts';

describe('a tick whose transaction rolls back', () => {
  it('leaves the store and memory agreeing once the next tick commits', async () => {
    const boa = await startService({
      config: { tickSeconds: 60, local: { maxNodes: 8, bootSeconds: 0, releaseSeconds: 0 }, budget: 40 },
    });
    try {
      const { service, scheduler, repo } = boa;
      await service.planner.idle();
      const { job } = service.registerJob('cifar10', 'a');
      // Until nodes are ready the job waits; the tick that would place it fails.
      await boa.ticks(2);
      expect(job.state).toBe('waiting');
      // The next tick places the job; its transaction fails once (disk full, say).
      failOnce(repo, 'setLastTick');
      const failedAt = boa.clock.now();
      await expect(scheduler.tick()).rejects.toThrow('SQLITE_FULL');
      expect(job.state).toBe('waiting');
      await scheduler.settle();
      boa.clock.advance(60);
      await boa.ticks(3);
      const inMemory = service.state.jobs.get(job.id)!;
      const stored = repo.getJob(job.id)!;
      expect(inMemory.state).toBe('running');
      const saved = (j: typeof stored) => ({
        state: j.state,
        allocation: j.allocation,
        generation: j.generation,
        startedAt: j.startedAt,
        gpuMs: j.gpuMs,
        gpuMsSince: j.gpuMsSince,
      });
      expect(saved(stored)).toEqual(saved(inMemory as typeof stored));
      // The ledger's allocation samples follow one another with no gap and no overlap: the failed
      // tick's interval is recorded once, by the tick after it.
      const samples = repo.db.$client
        .prepare('select from_ms as "from", to_ms as "to" from allocation_samples order by from_ms')
        .all() as Array<{ from: number; to: number }>;
      for (let i = 1; i < samples.length; i++) expect(samples[i]!.from).toBe(samples[i - 1]!.to);
      expect(samples.filter((s) => s.from < failedAt && s.to >= failedAt)).toHaveLength(1);
    } finally {
      await boa.close();
    }
  }, 60_000);

  it('puts the jobs back when the removal it chose cannot be stored', async () => {
    // A removal is written as it is chosen, before the tick's transaction: a budget cut narrows and
    // queues the jobs and picks nodes to remove in the same tick.
    const boa = await startService({
      config: {
        tickSeconds: 60,
        local: { maxNodes: 16, bootSeconds: 0, releaseSeconds: 0 },
        budget: 40,
        priorRates: { cifar10: 4 },
      },
    });
    try {
      const { service, scheduler, repo } = boa;
      await service.planner.idle();
      const jobs = Array.from({ length: 8 }, (_, i) => service.registerJob('cifar10', `j${i}`).job);
      await boa.ticks(4);
      expect(jobs.every((j) => j.state === 'running')).toBe(true);
      service.setBudget(4);
      await service.planner.idle();
      const removals = (scheduler.nodes as unknown as { deps: { removals: { insert: () => unknown } } }).deps
        .removals;
      failOnce(removals, 'insert');
      await expect(scheduler.tick()).rejects.toThrow('SQLITE_FULL');
      const agrees = () =>
        jobs
          .filter((j) => service.state.jobs.has(j.id))
          .every((j) => {
            const row = repo.getJob(j.id)!;
            return row.state === j.state && row.generation === j.generation && row.width === j.width;
          });
      expect(agrees()).toBe(true);
      await scheduler.settle();
      boa.clock.advance(60);
      await boa.ticks(3);
      expect(agrees()).toBe(true);
      expect(jobs.some((j) => j.state === 'waiting')).toBe(true);
    } finally {
      await boa.close();
    }
  }, 60_000);
});
