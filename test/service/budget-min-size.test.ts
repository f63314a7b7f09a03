/**
 * A node group whose minimum size is above what the spend ceiling allows: the minimum nodes are paid
 * whatever boa asks, so jobs run on them. Before, the ceiling's node count became placement's maxNodes
 * below the group's minSize and every tick threw: no job placed, no ledger, no heartbeat.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { bootService, InlinePlanComputer } from '../../src/service/boot.ts';
import { resolveConfig } from '../../src/service/config.ts';
import { LocalNodePool } from '../../src/cloud/local/local-node-pool.ts';
import { ManualClock } from './harness.ts';

describe('group minSize above the spend ceiling', () => {
  it('keeps ticking and starts a job on the nodes the group keeps anyway', async () => {
    const clock = new ManualClock();
    const config = resolveConfig({
      dataDir: ':memory:',
      token: 'operator-token-0123456789',
      gpusPerNode: 4,
      tickSeconds: 60,
      local: { maxNodes: 8, bootSeconds: 0, releaseSeconds: 0 },
    });
    const pool = new LocalNodePool(
      { minSize: 2, maxSize: 8, bootSeconds: 0, releaseSeconds: 0, gpusPerNode: 4 },
      clock,
      { logger: pino({ level: 'silent' }) },
    );
    const boa = await bootService(config, {
      clock,
      pool,
      computer: new InlinePlanComputer(),
      logger: pino({ level: 'silent' }),
      dataDir: ':memory:',
    });
    try {
      const { service, scheduler } = boa;
      // Accepted (the cheapest class runs on 1 GPU); ceiling 4.4 GPUs = 1 node of 4, group min 2.
      service.setBudget(4);
      await service.planner.idle();
      service.registerJob('cifar10', 'a');
      const errors: string[] = [];
      for (let i = 0; i < 5; i++) {
        try {
          await scheduler.tick();
        } catch (error) {
          errors.push((error as Error).message);
        }
        await service.planner.idle();
        await scheduler.settle();
        clock.advance(60);
      }
      expect(errors).toEqual([]);
      const job = [...service.state.jobs.values()][0]!;
      expect(job.state).toBe('running');
      expect(boa.repo.getJob(job.id)?.state).toBe('running');
      // Nothing paid beyond what the group holds anyway.
      expect(service.state.nodes).toHaveLength(2);
    } finally {
      await boa.close();
    }
  }, 60_000);
});
