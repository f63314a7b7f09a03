import { afterEach, describe, expect, it } from 'vitest';
import { METRIC_NAMES } from '../../infra/monitoring.ts';
import { windowView } from '../../src/service/views.ts';
import { type NodesWorld, nodesWorld } from '../service/nodes-harness.ts';

/**
 * The CDK app's alarms read what boa publishes: the silence alarm needs a Heartbeat every tick, the
 * alarms on paid spend and on AWS's in-service GPUs need the budget. This runs boa over the emulated EKS
 * node group and checks each tick's batch against the names the CDK app declares (infra/monitoring.ts).
 */
const worlds: NodesWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.cleanup();
});

describe("boa's metrics as the CDK app's alarms read them", () => {
  it('publishes the declared metrics each tick, a Heartbeat among them, the budget (0 before one is set) and its control once set', async () => {
    const w = nodesWorld();
    worlds.push(w);
    const { tick, boa } = await w.start();
    await tick(2);
    const res = await boa.app.request('/v1/budget', {
      method: 'PUT',
      headers: { authorization: `Bearer ${boa.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ gpuHoursPerHour: 40 }),
    });
    expect(res.status).toBeLessThan(300);
    await tick(3);

    expect(w.metrics).toHaveLength(5); // one batch per tick
    // The budget's control metrics exist only once there is a budget; everything else every tick.
    const control = ['LoadNeedsGpuHoursPerHour', 'SpendCeilingGpus', 'JobsQueuedForBudget'];
    w.metrics.forEach((batch, i) => {
      const names = batch.map((m) => m.name);
      const declared = METRIC_NAMES.filter((n) => i >= 2 || !control.includes(n));
      // Exactly the declared names, each once: nothing the dashboard or alarms read is missing.
      expect([...names].sort()).toEqual([...declared].sort());
      expect(batch.find((m) => m.name === 'Heartbeat')).toMatchObject({ value: 1, unit: 'Count' });
    });
    const budgets = w.metrics.map((b) => b.find((m) => m.name === 'BudgetGpuHoursPerHour')?.value);
    expect(budgets).toEqual([0, 0, 40, 40, 40]);
  });

  it('publishes the window GET /v1/budget shows, so a cut is judged by the budgets in force over it', async () => {
    const w = nodesWorld();
    worlds.push(w);
    const { tick, boa, job } = await w.start();
    const setBudget = (gpuHoursPerHour: number) =>
      boa.app.request('/v1/budget', {
        method: 'PUT',
        headers: { authorization: `Bearer ${boa.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ gpuHoursPerHour }),
      });
    await setBudget(40);
    job(8);
    await tick(30);
    await setBudget(4);
    await tick(6);
    // Read at the last tick (published before the clock moved on a tick).
    const view = windowView(boa.service, boa.service.deps.clock.now() - 60_000);
    const published = (name: string) => w.metrics.at(-1)?.find((m) => m.name === name)?.value;
    expect(published('PaidGpuHoursPerHourAverage')).toBe(view.paidGpuHoursPerHour);
    expect(published('WindowBudgetGpuHoursPerHour')).toBe(view.budgetGpuHoursPerHour);
    // The alarm's rule: paid - 1.1 x the window's budget, not the budget now (40 for 30 min, 4 for the 5 to the last tick).
    expect(view.budgetGpuHoursPerHour).toBeCloseTo((40 * 30 + 4 * 5) / 35, 3);
    expect(published('PaidGpuHoursPerHourAverage')!).toBeLessThan(1.1 * view.budgetGpuHoursPerHour!);
  });
});
