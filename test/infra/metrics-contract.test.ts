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

  it('averages the paid spend over the window a new budget starts: a cut is not judged by the old budget', async () => {
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
    const published = () => w.metrics.at(-1)?.find((m) => m.name === 'PaidGpuHoursPerHourAverage')?.value;
    expect(published()).toBeGreaterThan(4);

    await setBudget(4);
    const cutAt = boa.service.state.budget!.setAt;
    // The average is refreshed every 5 minutes (and at once when a budget is set): the sixth tick is one.
    await tick(6);
    const now = boa.service.deps.clock.now();
    // Read at the last tick (published before the clock moved on a tick): since the cut, not the day.
    const sinceCut = boa.service.ledgerAverages(cutAt, now - 60_000).paidGpuHoursPerHour;
    const whole = boa.service.ledgerAverages(boa.service.state.startedAt, now - 60_000).paidGpuHoursPerHour;
    expect(whole).toBeGreaterThan(sinceCut);
    expect(published()).toBeCloseTo(sinceCut, 6);
  });
});
