import { afterEach, describe, expect, it } from 'vitest';
import { METRIC_NAMES } from '../../infra/monitoring.ts';
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
});
