/**
 * Found in review: the CloudWatch overspend alarm compared the paid average since the budget was last set
 * with the budget now, so after a cut from 40 to 4 with 8 GPUs paid it fired (6.4 against 4.4 six
 * minutes on) while GET /v1/budget, the dashboard and /metrics, comparing the window's paid average with
 * the budgets in force over it, showed nothing over. boa now publishes that window: its paid average and
 * WindowBudgetGpuHoursPerHour, GET /v1/budget's window.budgetGpuHoursPerHour.
 */
import { CloudWatchClient, PutMetricDataCommand } from '@aws-sdk/client-cloudwatch';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, expect, it } from 'vitest';
import { CloudWatchSink } from '../../src/cloud/aws/cloudwatch-sink.ts';
import { type NodesWorld, nodesWorld } from '../service/nodes-harness.ts';
import { captureLogs } from './fake-time.ts';

const worlds: NodesWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.cleanup();
});

it("publishes the window's time-weighted budget and paid average, as GET /v1/budget shows them, after a cut", async () => {
  const client = new CloudWatchClient({ region: 'us-east-1' });
  const mock = mockClient(client);
  mock.on(PutMetricDataCommand).resolves({});
  const sink = new CloudWatchSink({ client, dimensions: { Cluster: 'boa' }, logger: captureLogs().logger });
  // A group that can run the first budget (12 nodes of 4 GPUs): one above it counts as the group's GPUs.
  const w = nodesWorld({ sink, maxSize: 12 });
  worlds.push(w);
  const { tick, boa, job, sync } = await w.start();
  const call = (method: string, body?: unknown) =>
    boa.app.request('/v1/budget', {
      method,
      headers: { authorization: `Bearer ${boa.token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  await call('PUT', { gpuHoursPerHour: 40 });
  job(8);
  await tick(60); // 40 for an hour
  await call('PUT', { gpuHoursPerHour: 4 });
  await tick(5);
  // The sixth tick after the cut by hand, so GET /v1/budget reads the same instant it published.
  sync();
  await boa.scheduler.tick();
  await boa.scheduler.settle();
  const { window } = (await (await call('GET')).json()) as {
    window: { paidGpuHoursPerHour: number; budgetGpuHoursPerHour: number };
  };
  await new Promise((resolve) => setImmediate(resolve));

  const last = mock.commandCalls(PutMetricDataCommand).at(-1)!.args[0].input;
  expect(last.MetricData![0]!.Timestamp).toEqual(new Date(boa.service.deps.clock.now()));
  const sent = (name: string) => last.MetricData!.find((d) => d.MetricName === name);
  expect(sent('WindowBudgetGpuHoursPerHour')).toMatchObject({
    Unit: 'None',
    Dimensions: [{ Name: 'Cluster', Value: 'boa' }],
  });
  const windowBudget = sent('WindowBudgetGpuHoursPerHour')!.Value!;
  // 40 for 60 minutes, then 4 for 5: time-weighted, not the 4 in force now.
  expect(windowBudget).toBeCloseTo((40 * 60 + 4 * 5) / 65, 3);
  expect(windowBudget).toBe(window.budgetGpuHoursPerHour);
  const paid = sent('PaidGpuHoursPerHourAverage')!.Value!;
  expect(paid).toBe(window.paidGpuHoursPerHour);
  expect(paid).toBeGreaterThan(4 * 1.1); // over the budget now by more than the slack ...
  expect(paid).toBeLessThan(1.1 * windowBudget); // ... but not over the window's: the alarm stays quiet
  expect(sent('BudgetGpuHoursPerHour')!.Value).toBe(4);
});
