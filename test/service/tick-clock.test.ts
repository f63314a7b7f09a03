/**
 * The tick reads its time after the node pool's calls (a listing on AWS takes a second or more): a job
 * submitted meanwhile must not start before it was submitted.
 */
import { describe, expect, it } from 'vitest';
import { startService } from './harness.ts';

describe("the tick's time", () => {
  it('is read after the pool answers, so no job starts before its submission', async () => {
    const boa = await startService({
      config: {
        tickSeconds: 60,
        local: { maxNodes: 8, bootSeconds: 0, releaseSeconds: 0 },
        budget: 40,
        priorRates: { cifar10: 2 },
      },
    });
    try {
      const { service, scheduler, pool } = boa;
      await service.planner.idle();
      const warm = [1, 2, 3].map((i) => service.registerJob('cifar10', `warm${i}`).job);
      await boa.ticks(3);
      // Free GPUs on a ready node, so the next job can start in the next tick.
      service.finishJob(warm[0]!.id, 'cancelled');
      service.finishJob(warm[2]!.id, 'cancelled');
      const list = pool.listNodes.bind(pool);
      let late: ReturnType<typeof service.registerJob>['job'] | undefined;
      pool.listNodes = async () => {
        const nodes = await list();
        boa.clock.advance(2); // the listing takes 2 s, and a submission is served meanwhile
        late = service.registerJob('cifar10', 'during-listing').job;
        return nodes;
      };
      await scheduler.tick();
      expect(late?.state).toBe('running');
      expect(late!.startedAt).toBeGreaterThanOrEqual(late!.submittedAt);
      expect(service.state.lastTickAt).toBe(boa.clock.now());
    } finally {
      await boa.close();
    }
  });
});
