/**
 * The opt-in warm-up (core/warmup.ts): the service plans with half its budget at its first start, rising
 * to all of it over `warmupHours`, and says so in the budget's control block. Off by default.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startService } from './harness.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

async function planned(config: Record<string, unknown>) {
  // Without the plan cap (a default), which would hold both plans to twice the load's minimum.
  const s = await startService({
    config: { priorRates: { cifar10: 8, bert: 1 }, planCapMultiple: 0, ...config },
  });
  cleanups.push(s.close);
  expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 })).status).toBe(200);
  await s.service.planner.idle();
  /** Re-plans `hours` after the start and reads what the calculator was given. */
  const at = async (hours: number) => {
    s.clock.t = s.service.state.startedAt + hours * 3_600_000;
    await s.service.planner.request('timer');
    const control = (await s.request('GET', '/v1/budget')).body.control;
    return { planningBudget: control.planningBudget, warmupFactor: control.warmupFactor };
  };
  return at;
}

describe('the warm-up', () => {
  it('plans with half the budget at the first start, rising linearly to all of it over warmupHours', async () => {
    const plain = await planned({});
    const warm = await planned({ warmupHours: 8 });
    const full = (await plain(0)).planningBudget;
    expect(full).toBeCloseTo(40, 6);
    expect(await warm(0)).toEqual({ planningBudget: full / 2, warmupFactor: 0.5 });
    expect(await warm(4)).toEqual({ planningBudget: full * 0.75, warmupFactor: 0.75 });
    expect(await warm(8)).toEqual({ planningBudget: full, warmupFactor: 1 });
    expect(await plain(2)).toEqual({ planningBudget: full, warmupFactor: 1 });
  });

  it('refuses warmupHours below 0, naming the setting', async () => {
    await expect(startService({ config: { warmupHours: -1 } })).rejects.toThrow(
      /warmupHours must be >= 0 \(0: no warm-up\)/,
    );
  });
});
