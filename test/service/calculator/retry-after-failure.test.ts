/**
 * A failed computation is tried again a minute later, then after 2, 4, 8 minutes, up to the timer's
 * period. Before, the next try was the timer's: a budget cut whose plan the store refused a moment
 * (SQLITE_BUSY) left the old budget's plan in force for a quarter of an hour.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startService } from '../harness.ts';
import { SpoilingComputer } from './spoiling-computer.ts';

type Booted = Awaited<ReturnType<typeof startService>>;
const services: Booted[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const s of services.splice(0)) await s.close();
});

async function boot() {
  const computer = new SpoilingComputer();
  const s = await startService({
    computer,
    config: { priorRates: { cifar10: 8, bert: 1 }, calculatorMinutes: 15, tickSeconds: 60 },
  });
  services.push(s);
  expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 })).status).toBe(200);
  await s.ticks(1);
  return { s, computer };
}

describe('a failed plan computation', () => {
  it('is tried again a minute later: a budget cut whose plan the store refused once takes effect then', async () => {
    const { s } = await boot();
    vi.spyOn(s.repo, 'insertPlan').mockImplementationOnce(() => {
      throw new Error('database is locked (SQLITE_BUSY)');
    });
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 10 })).status).toBe(200);
    await s.service.planner.idle();
    expect(s.service.state.plan!.row.budget).toBe(40);
    await s.ticks(2);
    expect(s.service.state.plan!.row.budget).toBe(10);
  }, 60_000);

  it('backs off while it keeps failing: 1, 2, 4, 8 minutes, then the timer period', async () => {
    const { s, computer } = await boot();
    computer.failWith = 'plan worker exited with code 134';
    const before = computer.computations;
    void s.service.planner.request('timer');
    await s.service.planner.idle();
    // Two hours of ticks: retries at 1, 3, 7, 15 minutes, then every 15.
    await s.ticks(120);
    const tries = computer.computations - before;
    expect(tries).toBeGreaterThanOrEqual(10);
    expect(tries).toBeLessThanOrEqual(13);
  }, 120_000);
});
