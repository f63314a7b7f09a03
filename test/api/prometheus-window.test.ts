/**
 * Found in review: after a budget cut, /metrics and GET /v1/budget had two rules for "over budget".
 * boa_paid_gpu_hours_per_hour averaged a window restarted at the cut, so an alert on it above the new
 * budget fired (6 against 4, six minutes after a cut from 40 to 4) while the dashboard, comparing the
 * window's average with the budgets in force over it, showed nothing overspent. Now the gauges are GET
 * /v1/budget's window and boa_window_budget_gpu_hours_per_hour is what it is held to.
 */
import { afterEach, expect, it } from 'vitest';
import { type NodesWorld, nodesWorld } from '../service/nodes-harness.ts';

const worlds: NodesWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.cleanup();
});

it('exports the window GET /v1/budget shows and the budget it is held to, one rule for over', async () => {
  // A group that can run the first budget (12 nodes of 4 GPUs): one above it counts as the group's GPUs.
  const w = nodesWorld({ maxSize: 12 });
  worlds.push(w);
  const { tick, boa, job } = await w.start();
  const call = (method: string, path: string, body?: unknown) =>
    boa.app.request(path, {
      method,
      headers: { authorization: `Bearer ${boa.token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const scraped = async (name: string) =>
    Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(await (await call('GET', '/metrics')).text())?.[1]);
  expect(await scraped('boa_window_budget_gpu_hours_per_hour')).toBeNaN();
  await call('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
  job(8);
  await tick(30);
  await call('PUT', '/v1/budget', { gpuHoursPerHour: 4 });
  for (const minutes of [6, 60]) {
    await tick(minutes === 6 ? 6 : 54);
    const { window } = (await (await call('GET', '/v1/budget')).json()) as {
      window: {
        paidGpuHoursPerHour: number;
        allocatedGpuHoursPerHour: number;
        budgetGpuHoursPerHour: number;
      };
    };
    const paid = await scraped('boa_paid_gpu_hours_per_hour');
    const held = await scraped('boa_window_budget_gpu_hours_per_hour');
    expect(paid).toBe(window.paidGpuHoursPerHour);
    expect(held).toBe(window.budgetGpuHoursPerHour);
    expect(await scraped('boa_allocated_gpu_hours_per_hour')).toBe(window.allocatedGpuHoursPerHour);
    // Above the budget now, within what the window was promised: not over, as the dashboard says.
    expect(await scraped('boa_budget_gpu_hours_per_hour')).toBe(4);
    expect(paid).toBeGreaterThan(4);
    expect(paid).toBeLessThan(held);
  }
});
