/**
 * The node group's maximum bounds the widths the calculator plans. The profiles list widths up to 64
 * GPUs; a group of at most 2 nodes of 4 can give one job 8. Before, the plan counted on widths of 16
 * and more at a generous budget: speedups no job could reach, and budget spent on them in the plan.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { LocalNodePool } from '../../src/cloud/local/local-node-pool.ts';
import { bootService, InlinePlanComputer } from '../../src/service/boot.ts';
import { resolveConfig } from '../../src/service/config.ts';
import { ManualClock } from './harness.ts';

function widestPlanned(plan: Readonly<Record<string, ReadonlyArray<{ widths: readonly number[] }>>>) {
  return Math.max(...Object.values(plan).flatMap((shares) => shares.flatMap((s) => [...s.widths])));
}

describe('plan widths and the node group maximum', () => {
  it('plans no job wider than the group can hold, and re-plans once the group is known', async () => {
    const clock = new ManualClock();
    const logger = pino({ level: 'silent' });
    const config = resolveConfig({
      dataDir: ':memory:',
      token: 'operator-token-0123456789',
      gpusPerNode: 4,
      tickSeconds: 60,
      local: { maxNodes: 2, bootSeconds: 0, releaseSeconds: 0 },
    });
    const pool = new LocalNodePool(
      { minSize: 0, maxSize: 2, bootSeconds: 0, releaseSeconds: 0, gpusPerNode: 4 },
      clock,
      { logger },
    );
    const boa = await bootService(config, {
      clock,
      pool,
      computer: new InlinePlanComputer(),
      logger,
      dataDir: ':memory:',
    });
    try {
      const { service, scheduler } = boa;
      // Generous: the cheapest plan for the prior rates needs far less, so the plan widens where it can.
      service.setBudget(500);
      await service.planner.idle();
      // Before the first tick the group is not described yet: nothing bounds the plan.
      const unbounded = widestPlanned(service.state.plan!.plan);
      expect(unbounded).toBeGreaterThan(8);
      await scheduler.tick();
      await service.planner.idle();
      const row = service.state.plan!.row;
      expect((row.inputs as { maxWidth?: number }).maxWidth).toBe(8);
      expect(widestPlanned(service.state.plan!.plan)).toBeLessThanOrEqual(8);
      // Known and unchanged: the next tick does not plan again.
      await scheduler.tick();
      await service.planner.idle();
      expect(service.state.plan!.row.id).toBe(row.id);
    } finally {
      await boa.close();
    }
  }, 60_000);
});
