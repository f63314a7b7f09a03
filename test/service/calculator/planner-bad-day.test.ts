/**
 * The planning path on a bad day, where it held (failure-mode review): a computation that outlasts the
 * timer, a class deleted while one runs, a store that refuses the plan, a stop in the middle of one.
 * The scheduler keeps deciding on the last good plan throughout.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { GatedComputer } from '../gated-computer.ts';
import { ManualClock, startService } from '../harness.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const config = { priorRates: { cifar10: 8, bert: 1 }, calculatorMinutes: 15 };

async function boot(options: { dataDir?: string; clock?: ManualClock; computer?: GatedComputer } = {}) {
  const computer = options.computer ?? new GatedComputer();
  const s = await startService({ ...options, computer, config });
  let closed = false;
  const close = async () => {
    if (!closed) await s.close();
    closed = true;
  };
  cleanups.push(close);
  return { s, computer, close };
}

describe('the planner on a bad day', () => {
  it('starts no second computation while one outlasts the timer; ticks go on with the plan in force', async () => {
    const { s, computer } = await boot();
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 20 })).status).toBe(200);
    await s.ticks(1);
    const plan = s.service.state.plan!.row.id;
    computer.open = false;
    // An hour of ticks: four timer periods with the first computation held all along.
    s.clock.advance(15 * 60);
    for (let i = 0; i < 60; i++) {
      await s.scheduler.tick();
      await s.scheduler.settle();
      s.clock.advance(60);
    }
    expect(computer.held).toHaveLength(1);
    expect(s.service.state.plan!.row.id).toBe(plan);
    expect(s.service.state.lastTickAt).toBe(s.clock.now() - 60_000);
    computer.held.shift()!.go();
    await s.service.planner.idle();
    expect(s.service.state.plan!.row.id).toBeGreaterThan(plan);
  }, 60_000);

  it('does not put in force a plan computed with a class deleted meanwhile', async () => {
    const { s, computer } = await boot();
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 20 })).status).toBe(200);
    const plan = s.service.state.plan!.row.id;
    computer.open = false;
    void s.service.planner.request('timer');
    expect((await s.request('DELETE', '/v1/classes/bert')).status).toBe(200);
    computer.held.shift()!.go();
    await new Promise((resolve) => setImmediate(resolve));
    expect(s.service.state.plan!.row.id).toBe(plan);
    computer.held.shift()!.go();
    await s.service.planner.idle();
    expect(Object.keys(s.service.state.plan!.plan)).not.toContain('bert');
  }, 60_000);

  it('keeps the plan in force when the store refuses the new one, and stores the next', async () => {
    const { s } = await boot();
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 20 })).status).toBe(200);
    const plan = s.service.state.plan!.row.id;
    vi.spyOn(s.repo, 'insertPlan').mockImplementationOnce(() => {
      throw new Error('database is locked (SQLITE_BUSY)');
    });
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 30 })).status).toBe(200);
    await s.service.planner.idle();
    expect(s.service.state.plan!.row.id).toBe(plan);
    expect(s.repo.latestPlan()!.id).toBe(plan);
    expect((await s.request('GET', '/v1/status')).body.plannerError).toBe('database is locked (SQLITE_BUSY)');
    // The next try (a minute later: retry-after-failure.test.ts) plans for the budget now, and clears the error.
    await s.ticks(16);
    expect(s.service.state.plan!.row.budget).toBe(30);
    expect((await s.request('GET', '/v1/status')).body.plannerError).toBeNull();
  }, 60_000);

  it('plans again at the first tick after a stop ended the computation for a new budget', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'boa-plan-stop-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const clock = new ManualClock();
    const first = await boot({ dataDir, clock });
    expect((await first.s.request('PUT', '/v1/budget', { gpuHoursPerHour: 20 })).status).toBe(200);
    first.computer.open = false;
    first.s.service.setBudget(30);
    expect(first.computer.held).toHaveLength(1);
    await first.close();
    // Nothing half made was stored: the plan on disk is still the one for 20.
    const second = await boot({ dataDir, clock });
    expect(second.s.service.state.plan!.row.budget).toBe(20);
    await second.s.ticks(1);
    expect(second.s.service.state.plan!.row.budget).toBe(30);
  }, 60_000);
});
