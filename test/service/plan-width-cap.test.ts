/**
 * The node group's maximum bounds the widths the calculator plans. The profiles list widths up to 64
 * GPUs; a group of at most 2 nodes of 4 can give one job 8. Before, the plan counted on widths of 16
 * and more at a generous budget: speedups no job could reach, and budget spent on them in the plan.
 */
import { describe, expect, it, vi } from 'vitest';
import { InlinePlanComputer } from '../../src/service/calculator/computer.ts';
import type { BoaService } from '../../src/service/service.ts';
import { startService } from './harness.ts';

function widestPlanned(plan: Readonly<Record<string, ReadonlyArray<{ widths: readonly number[] }>>>) {
  return Math.max(...Object.values(plan).flatMap((shares) => shares.flatMap((s) => [...s.widths])));
}

/** The group maximum the plan in force was made for; undefined: none known then. */
function plannedMaxWidth(service: BoaService): number | undefined {
  return (service.state.plan!.row.inputs as { maxWidth?: number }).maxWidth;
}

/**
 * The embedded default's local pool at most 2 nodes of 4 GPUs, and a generous budget: the cheapest
 * plan for the prior rates needs far less, so the plan widens where it can. Planned before the first
 * tick, when the group is not described yet.
 */
async function withSmallGroup(run: (boa: Awaited<ReturnType<typeof startService>>) => Promise<void>) {
  const boa = await startService({
    config: { gpusPerNode: 4, local: { maxNodes: 2, bootSeconds: 0, releaseSeconds: 0 } },
  });
  try {
    boa.service.setBudget(500);
    await boa.service.planner.idle();
    await run(boa);
  } finally {
    vi.restoreAllMocks();
    await boa.close();
  }
}

describe('plan widths and the node group maximum', () => {
  it('plans no job wider than the group can hold, and re-plans once the group is known', async () => {
    await withSmallGroup(async ({ service, scheduler }) => {
      // Before the first tick the group is not described yet: nothing bounds the plan.
      expect(widestPlanned(service.state.plan!.plan)).toBeGreaterThan(8);
      await scheduler.tick();
      await service.planner.idle();
      const row = service.state.plan!.row;
      expect(plannedMaxWidth(service)).toBe(8);
      expect(widestPlanned(service.state.plan!.plan)).toBeLessThanOrEqual(8);
      // Known and unchanged: the next tick does not plan again.
      await scheduler.tick();
      await service.planner.idle();
      expect(service.state.plan!.row.id).toBe(row.id);
    });
  }, 60_000);

  it('asks once per change of the group for a plan that keeps failing, not every tick', async () => {
    await withSmallGroup(async ({ service, scheduler }) => {
      const compute = vi
        .spyOn(InlinePlanComputer.prototype, 'compute')
        .mockRejectedValue(new Error('the calculator is down'));
      for (let i = 0; i < 5; i++) {
        await scheduler.tick();
        await service.planner.idle();
      }
      // The group became known (2 nodes of 4) at the first tick: one re-plan asked for, and it failed.
      const groupReplans = compute.mock.calls.filter(([inputs]) => inputs.maxWidth === 8).length;
      expect(groupReplans).toBe(1);
      expect(plannedMaxWidth(service)).toBeUndefined();
      // The calculator back: the ticks do not ask again for the same group; the timer's run plans it.
      compute.mockRestore();
      await scheduler.tick();
      await service.planner.idle();
      expect(plannedMaxWidth(service)).toBeUndefined();
      await service.planner.request('timer');
      expect(plannedMaxWidth(service)).toBe(8);
    });
  }, 60_000);
});
