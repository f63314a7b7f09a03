/**
 * Setting the budget again: a new budget starts a new window (docs/budget.md), but the same budget
 * set again (a retried PUT, a deploy script that sets it on every run) is the same promise: its
 * window, and the debt paid above it, carry on.
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
  s.repo.observeNodes(nodes, s.clock.t);
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

  it('starts a new window for a new budget (the documented rule)', async () => {
    const { s, before } = await anHourInDebt();
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 41 })).status).toBe(200);
    const after = (await s.request('GET', '/v1/budget')).body;
    expect(after.setAt).not.toBe(before.setAt);
    expect(after.control.debtGpuHours).toBe(0);
  });
});
