/**
 * Setting the budget again: the same budget set again (a retried PUT, a deploy script that sets it on
 * every run) is the same promise; a new one holds every window to what was promised over it, the old
 * value for the hours it was in force (docs/budget.md): a change forgives no debt.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startService } from './harness.ts';

const HOUR = 3_600_000;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

/**
 * A budget of 40 under which the ledger paid 64 GPUs for an hour (nodes the group kept above the
 * ceiling, say): 24 GPU-hours of debt, and a ceiling lowered to repay it.
 */
async function anHourInDebt() {
  const s = await startService();
  cleanups.push(s.close);
  expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 })).status).toBe(200);
  const nodes = Array.from({ length: 16 }, (_, i) => ({ id: `n-${i}`, gpus: 4, launchedAt: s.clock.t }));
  s.repo.ledger.observeNodes(nodes, s.clock.t);
  s.clock.t += HOUR;
  const before = (await s.request('GET', '/v1/budget')).body;
  expect(before.control.debtGpuHours).toBeCloseTo(24, 6);
  expect(before.control.ceilingGpus).toBeCloseTo(44 - 24, 6);
  return { s, before };
}

describe('setting the budget again', () => {
  it('keeps the window and its debt when the same budget is set again', async () => {
    const { s, before } = await anHourInDebt();
    const put = await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    expect(put.status).toBe(200);
    expect(put.body.setAt).toBe(before.setAt);
    const after = (await s.request('GET', '/v1/budget')).body;
    expect(after.setAt).toBe(before.setAt);
    expect(after.control.debtGpuHours).toBeCloseTo(before.control.debtGpuHours, 6);
    expect(after.control.ceilingGpus).toBeCloseTo(before.control.ceilingGpus, 6);
  });

  it('keeps the debt paid under the old budget when a new one is set: a change forgives nothing', async () => {
    const { s, before } = await anHourInDebt();
    // A hair more (40 -> 40.01) used to start a new window and clear 24 GPU-hours of debt.
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40.01 })).status).toBe(200);
    const after = (await s.request('GET', '/v1/budget')).body;
    expect(after.setAt).not.toBe(before.setAt);
    expect(after.control.debtGpuHours).toBeCloseTo(24, 6);
    expect(after.control.ceilingGpus).toBeCloseTo(40.01 * 1.1 - 24, 2); // shown to 2 decimals
    // A cut holds the next hour to the new budget less the same debt: never looser than before it.
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 30 })).status).toBe(200);
    const cut = (await s.request('GET', '/v1/budget')).body;
    expect(cut.control.debtGpuHours).toBeCloseTo(24, 6);
    expect(cut.control.ceilingGpus).toBeCloseTo(30 * 1.1 - 24, 2);
    expect(cut.control.ceilingGpus).toBeLessThan(before.control.ceilingGpus);
  });

  it('keeps the slack after a change: a raise never lowers the ceiling (found by a newcomer)', async () => {
    const s = await startService();
    cleanups.push(s.close);
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 })).status).toBe(200);
    expect((await s.request('GET', '/v1/budget')).body.control.ceilingGpus).toBeCloseTo(44, 2);
    s.clock.t += 60_000;
    // Each window the change is inside was held as if these GPUs ran to its end, 24 hours: 41.2 GPUs
    // at 41, 80.3 at 80, lower than the 44 at 40 before the raise, for a day.
    for (const budget of [41, 80]) {
      expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: budget })).status).toBe(200);
      const ceiling = (await s.request('GET', '/v1/budget')).body.control.ceilingGpus;
      expect(ceiling).toBeGreaterThan(budget * 1.1 - 0.5);
      expect(ceiling).toBeLessThanOrEqual(budget * 1.1 + 1e-6);
    }
  });

  it('holds each window to what was promised over it across a change (40, then 80 for an hour)', async () => {
    const { s } = await anHourInDebt(); // an hour at 40 paying 64
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 80 })).status).toBe(200);
    s.repo.ledger.observeNodes([], s.clock.t); // nothing paid in the hour at 80
    s.clock.t += HOUR;
    // Promised over the two hours: 40 + 80 = 120; paid 64: 56 GPU-hours of room.
    const after = (await s.request('GET', '/v1/budget')).body;
    expect(after.control.debtGpuHours).toBeCloseTo(64 - 120, 6);
    // Back to 40: the room the hour at 80 left is the promise of that hour, not forgiven debt.
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 })).status).toBe(200);
    const back = (await s.request('GET', '/v1/budget')).body;
    expect(back.control.debtGpuHours).toBeCloseTo(64 - 120, 6);
  });
});

/** A service at budget 80 that was paid `hourly` GPUs hour by hour, the clock at the end of them. */
async function paidHourly(hourly: readonly number[]) {
  const s = await startService();
  cleanups.push(s.close);
  expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 80 })).status).toBe(200);
  const paidFor = (gpus: number) =>
    s.repo.ledger.observeNodes(
      Array.from({ length: gpus / 4 }, (_, i) => ({ id: `n-${i}`, gpus: 4, launchedAt: s.clock.t })),
      s.clock.t,
    );
  for (const gpus of hourly) {
    paidFor(gpus);
    s.clock.t += HOUR;
  }
  paidFor(0);
  return s;
}

describe('a cut after a burst', () => {
  it('lets nothing run while a window that holds the burst is already over what it promises', async () => {
    // 18 quiet hours save room; two 400-GPU hours spend it (hours 18 and 20); a cut to 20 at hour 21.
    const s = await paidHourly([...Array<number>(18).fill(0), 400, 0, 400]);
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 20 })).status).toBe(200);
    s.clock.t += 9 * HOUR;
    // Hour 30: the window from hour 18 to 42 holds 800 GPU-hours against 3 x 80 + 21 x 20 = 660 promised.
    const control = (await s.request('GET', '/v1/budget')).body.control;
    expect(control.ceilingGpus).toBe(0);
  });

  it('holds the tick at the very instant of the cut too: a burst just before it fills the window', async () => {
    // 15 quiet hours, two 400-GPU hours, then a cut to 20 read at the same instant it is made.
    const s = await paidHourly([...Array<number>(15).fill(0), 400, 400]);
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 20 })).status).toBe(200);
    // The window from hour 15 to 39 holds 800 GPU-hours against 2 x 80 + 22 x 20 = 600 promised.
    expect((await s.request('GET', '/v1/budget')).body.control.ceilingGpus).toBe(0);
  });
});
