/**
 * Found in an SRE trial: boa_paid_gpu_hours_per_hour averaged the last window whatever the budget,
 * while CloudWatch's PaidGpuHoursPerHourAverage, which the overspend alarm reads, starts anew at a new
 * budget; after a cut, a Prometheus alert on paid > budget judged the day paid at the old budget by the
 * new one. Both now read the same window.
 */
import { afterEach, expect, it } from 'vitest';
import { type NodesWorld, nodesWorld } from '../service/nodes-harness.ts';

const worlds: NodesWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.cleanup();
});

it('averages the paid spend over the window a new budget starts, as CloudWatch does', async () => {
  const w = nodesWorld();
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
  await call('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
  job(8);
  await tick(30);
  await call('PUT', '/v1/budget', { gpuHoursPerHour: 4 });
  await tick(6); // CloudWatch's average is refreshed every 5 minutes and at once at a new budget
  const now = boa.service.deps.clock.now();
  const cutAt = boa.service.state.budget!.setAt;
  const sinceCut = boa.service.ledgerAverages(cutAt, now).paidGpuHoursPerHour;
  const whole = boa.service.ledgerAverages(boa.service.state.startedAt, now).paidGpuHoursPerHour;
  expect(whole).toBeGreaterThan(sinceCut);
  expect(await scraped('boa_paid_gpu_hours_per_hour')).toBeCloseTo(sinceCut, 6);
  const published = w.metrics.at(-1)?.find((m) => m.name === 'PaidGpuHoursPerHourAverage')?.value;
  expect(published).toBeGreaterThan(0);
  expect(await scraped('boa_allocated_gpu_hours_per_hour')).toBeCloseTo(
    boa.service.ledgerAverages(cutAt, now).allocatedGpuHoursPerHour,
    6,
  );
});
