/**
 * A budget above what the node group can ever run, set for a few seconds by mistake: the window's
 * budget counts it at the group's GPUs, so it does not hide a day of overspending from the window's
 * paid-against-budget rule (the overspend alarm, the dashboard, /metrics).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startService } from './harness.ts';

const HOUR = 3_600_000;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

describe('a mistyped budget corrected within seconds', () => {
  it('counts in the window at most the GPUs the node group can run', async () => {
    const s = await startService({ config: { local: { maxNodes: 4, bootSeconds: 0, releaseSeconds: 0 } } });
    cleanups.push(s.close);
    await s.ticks(1);
    const started = s.clock.t;
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 100000 })).status).toBe(200);
    s.clock.advance(5);
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 4 })).status).toBe(200);
    // 8 GPUs paid for the hour after: twice the budget.
    const nodes = [0, 1].map((i) => ({ id: `n-${i}`, gpus: 4, launchedAt: s.clock.t }));
    s.repo.ledger.observeNodes(nodes, s.clock.t);
    s.clock.t += HOUR;
    const window = (await s.request('GET', '/v1/budget')).body.window;
    // The window reaches back to the service's start, a tick before the first budget, which counts back
    // to there: 16 GPUs (not 100000) for those 65 s, 4 for the hour since.
    const hours = (s.clock.t - (started - 60_000)) / HOUR;
    expect(hours).toBeCloseTo(1 + 65 / 3600, 9);
    expect(window.budgetGpuHoursPerHour).toBeCloseTo((16 * (65 / 3600) + 4) / hours, 3);
    expect(window.paidGpuHoursPerHour).toBeGreaterThan(window.budgetGpuHoursPerHour);
  });

  it('holds the average since set to the same GPUs as the window, not to the budget as typed', async () => {
    const s = await startService({ config: { local: { maxNodes: 4, bootSeconds: 0, releaseSeconds: 0 } } });
    cleanups.push(s.close);
    await s.ticks(1);
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 100000 })).status).toBe(200);
    s.clock.t += HOUR;
    const body = (await s.request('GET', '/v1/budget')).body;
    expect(body.gpuHoursPerHour).toBe(100000);
    // 4 nodes of 4 GPUs: all the group can ever run, in both rows (the since-set row said 100000).
    expect(body.window.budgetGpuHoursPerHour).toBe(16);
    expect(body.sinceSet.budgetGpuHoursPerHour).toBe(16);
    // A budget within the group's GPUs is held to as set.
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 8 })).status).toBe(200);
    expect((await s.request('GET', '/v1/budget')).body.sinceSet.budgetGpuHoursPerHour).toBe(8);
  });

  it('counts each budget at the group it was set under: a group made smaller later makes no debt', async () => {
    const s = await startService({ config: { local: { maxNodes: 4, bootSeconds: 0, releaseSeconds: 0 } } });
    cleanups.push(s.close);
    await s.ticks(1);
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 12 })).status).toBe(200);
    s.clock.t += HOUR;
    const before = (await s.request('GET', '/v1/budget')).body.window.budgetGpuHoursPerHour;
    // The group's maximum cut to one node (4 GPUs) after an hour at 12: that hour was promised 12.
    s.service.state.group = {
      ...(s.service.state.group as NonNullable<typeof s.service.state.group>),
      maxSize: 1,
    };
    expect((await s.request('GET', '/v1/budget')).body.window.budgetGpuHoursPerHour).toBe(before);
    expect(before).toBeGreaterThan(11);
  });
});
