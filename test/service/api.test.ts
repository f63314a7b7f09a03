import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { MetricDatum } from '../../src/service/ports.ts';
import { startService } from './harness.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

async function started(options: Parameters<typeof startService>[0] = {}) {
  const s = await startService(options);
  cleanups.push(s.close);
  return s;
}

describe('budget API', () => {
  it('sets and reads the budget, with spend and $ per month', async () => {
    const s = await started();
    const put = await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    expect(put.status).toBe(200);
    expect(put.body.gpuHoursPerHour).toBe(40);
    expect(put.body.minFeasibleBudget).toBeGreaterThan(0);
    const get = await s.request('GET', '/v1/budget');
    expect(get.body.gpuHoursPerHour).toBe(40);
    // 40 GPUs at a quarter of a g4dn.12xlarge's $3.912/h, 730 h a month.
    expect(get.body.dollarsPerMonth).toBeCloseTo(40 * (3.912 / 4) * 730, 1);
  });

  it('warns of a budget above the GPUs the node group can ever run, in the answer a script reads', async () => {
    const s = await started({ config: { local: { maxNodes: 4, bootSeconds: 0, releaseSeconds: 0 } } });
    await s.ticks(1);
    const over = await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 17 });
    expect(over.status).toBe(200);
    expect(over.body.maxGpus).toBe(16);
    expect(over.body.warning).toBe(
      'budget 17 is above the 16 GPUs the node group can ever run (its maximum nodes x GPUs per node): ' +
        'at most those are paid, the rest can never be spent',
    );
    // What it can spend is the 16 GPUs': the month's dollars and the GPUs short of it (none is 17).
    expect(over.body.dollarsPerMonth).toBeCloseTo(16 * (3.912 / 4) * 730, 1);
    const got = (await s.request('GET', '/v1/budget')).body;
    expect(got.dollarsPerMonth).toBeCloseTo(16 * (3.912 / 4) * 730, 1);
    expect(got.control.belowBudget.gpus).toBe(16);
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 16 })).body.warning).toBeNull();
  });

  it('accepts a budget below the minimum for the load with a warning; 422 only below one job on one node', async () => {
    // 8 cifar10 jobs an hour of about an hour's work each need at least about 8 GPUs.
    const s = await started({ config: { priorRates: { cifar10: 8 } } });
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    const low = await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 5 });
    expect(low.status).toBe(200);
    expect(low.body.gpuHoursPerHour).toBe(5);
    expect(low.body.minFeasibleBudget).toBeGreaterThan(7);
    expect(low.body.minFeasibleBudget).toBeLessThan(12);
    expect(low.body.warning).toMatch(/below \d+\.\d{3} GPU-hours\/hour.*jobs will queue/);
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 12 })).body.warning).toBeNull();

    // No class runs on less than 1 GPU, and nodes (4 GPUs here) are paid whole: below one node
    // nothing could keep running (a budget of 3 ran nothing for hours and said nothing).
    for (const gpuHoursPerHour of [0.5, 3]) {
      const tooLow = await s.request('PUT', '/v1/budget', { gpuHoursPerHour });
      expect(tooLow.status).toBe(422);
      expect(tooLow.body.error.field).toBe('gpuHoursPerHour');
      expect(tooLow.body.error.minFeasibleBudget).toBe(4);
      expect(tooLow.body.error.message).toMatch(
        /cheapest class needs at least 1 GPU, and boa pays whole nodes of 4 GPUs\. The smallest accepted budget is 4\./,
      );
    }
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 4 })).status).toBe(200);
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 12 });
    expect((await s.request('GET', '/v1/budget')).body.gpuHoursPerHour).toBe(12);
  });

  it.each([
    [{ gpuHoursPerHour: -3 }, 'gpuHoursPerHour'],
    [{ gpuHoursPerHour: 'forty' }, 'gpuHoursPerHour'],
    [{ budget: 40 }, 'gpuHoursPerHour'],
  ])('refuses %j with 400 naming the field, changing nothing', async (body, field) => {
    const s = await started();
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    const bad = await s.request('PUT', '/v1/budget', body);
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain(field);
    expect((await s.request('GET', '/v1/budget')).body.gpuHoursPerHour).toBe(40);
  });

  it('refuses a body that is not JSON', async () => {
    const s = await started();
    const bad = await s.request('PUT', '/v1/budget', '{"gpuHoursPerHour": 4');
    expect(bad.status).toBe(400);
  });

  it('needs the operator token for every mutating call', async () => {
    const s = await started();
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 }, null)).status).toBe(401);
    expect(
      (await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 }, 'wrong-token-wrong-token')).status,
    ).toBe(401);
    expect((await s.request('POST', '/v1/jobs', { class: 'cifar10' }, null)).status).toBe(401);
    expect((await s.request('POST', '/v1/plan/recompute', undefined, 'nope')).status).toBe(401);
    expect((await s.request('GET', '/v1/budget')).body.gpuHoursPerHour).toBeNull();
  });

  it('keeps the budget across a restart on the same data directory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'boa-api-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const first = await startService({ dataDir: dir });
    await first.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    await first.close();
    const second = await started({ dataDir: dir });
    expect((await second.request('GET', '/v1/budget')).body.gpuHoursPerHour).toBe(40);
  });
});

describe('classes API', () => {
  const profile = (speedup: Record<string, number>) => ({
    profile: { name: 'tiny', weight: 1, rescaleSeconds: 30, epochs: [{ workSeconds: 600, speedup }] },
    priorRatePerHour: 2,
  });

  it('accepts a valid profile, lists measured dips, and refuses a malformed table, naming what is wrong', async () => {
    const s = await started();
    const monotone = await s.request('PUT', '/v1/classes/tiny', profile({ 1: 1, 2: 1.9, 4: 3.5 }));
    expect(monotone.status).toBe(200);
    expect(monotone.body.dips).toEqual([]);
    // A dip is measured reality (node boundaries): accepted and named, since plans use the hull.
    const falling = await s.request('POST', '/v1/classes/validate', profile({ 1: 1, 2: 1.9, 4: 1.5 }));
    expect(falling.status).toBe(200);
    expect(falling.body.dips).toEqual(['epochs[0]: speedup falls from 1.9 at 2 GPUs to 1.5 at 4 GPUs']);
    await s.request('PUT', '/v1/classes/tiny', profile({ 1: 1, 2: 1.9, 4: 3.5 }));
    const malformed = await s.request('PUT', '/v1/classes/tiny', profile({ 2: 1.9 }));
    expect(malformed.body.error.message).toMatch(/must list width "1"/);
    const names = (await s.request('GET', '/v1/classes')).body.classes.map((c: { name: string }) => c.name);
    expect(names).toContain('tiny');
    const tiny = (await s.request('GET', '/v1/classes')).body.classes.find(
      (c: { name: string }) => c.name === 'tiny',
    );
    expect(tiny.profile.epochs[0].speedup['4']).toBe(3.5);
  });

  it('accepts every committed default profile as served by GET /v1/classes (bert dips included)', async () => {
    const s = await started();
    const classes = (await s.request('GET', '/v1/classes')).body.classes as Array<{ profile: unknown }>;
    expect(classes.length).toBeGreaterThan(0);
    const dips: string[] = [];
    for (const c of classes) {
      const res = await s.request('POST', '/v1/classes/validate', { profile: c.profile });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      dips.push(...res.body.dips);
    }
    expect(dips.some((d) => /falls from 15\.1\d* at 48 GPUs to 12\.3\d* at 56 GPUs/.test(d))).toBe(true);
  });
});

describe('operations', () => {
  it('serves the OpenAPI document, health, readiness and Prometheus metrics', async () => {
    const s = await started();
    const doc = await s.request('GET', '/openapi.json', undefined, null);
    expect(doc.status).toBe(200);
    expect(Object.keys(doc.body.paths)).toEqual(
      expect.arrayContaining(['/v1/budget', '/v1/jobs', '/v1/jobs/{id}/allocation']),
    );
    expect((await s.request('GET', '/healthz', undefined, null)).status).toBe(200);
    expect((await s.request('GET', '/readyz', undefined, null)).status).toBe(503);
    // Before a budget and a plan, what does not exist reads NaN, never a real-looking 0.
    const before = (await s.request('GET', '/metrics')).body;
    expect(before).toMatch(/^boa_budget_gpu_hours_per_hour Nan$/m);
    expect(before).toMatch(/^boa_plan_predicted_avg_jct_seconds Nan$/m);
    expect(before).toMatch(/^boa_load_needs_gpu_hours_per_hour Nan$/m);
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    await s.ticks(1);
    expect((await s.request('GET', '/readyz', undefined, null)).status).toBe(200);
    expect((await s.request('GET', '/metrics', undefined, null)).status).toBe(401);
    const metrics = await s.request('GET', '/metrics');
    expect(metrics.body).toMatch(/^boa_budget_gpu_hours_per_hour 40$/m);
    expect(metrics.body).toMatch(/^boa_plan_predicted_avg_jct_seconds \d/m);
    // What an operator alerts on: a stalled tick, GPUs now, jobs held back by the budget.
    await s.request('POST', '/v1/jobs', { class: 'cifar10' });
    await s.ticks(4); // the local nodes boot and the job gets GPUs
    const status = (await s.request('GET', '/v1/status')).body;
    expect(status.gpus.allocated).toBeGreaterThan(0);
    expect(status.budget.loadNeedsGpuHoursPerHour).toBeGreaterThan(0);
    const now = (await s.request('GET', '/metrics')).body;
    expect(now).toContain(`boa_last_tick_timestamp_seconds ${Date.parse(status.lastTickAt) / 1000}\n`);
    expect(now).toContain(`boa_gpus{kind="allocated"} ${status.gpus.allocated}\n`);
    expect(now).toContain(`boa_gpus{kind="lent"} ${status.gpus.lent}\n`);
    expect(now).toContain(`boa_gpus{kind="paid"} ${status.gpus.paid}\n`);
    expect(now).toContain(`boa_jobs_queued_for_budget ${status.budget.queuedForBudget}\n`);
    const loadNeeds = Number(/^boa_load_needs_gpu_hours_per_hour (\S+)$/m.exec(now)?.[1]);
    expect(loadNeeds).toBeCloseTo(status.budget.loadNeedsGpuHoursPerHour, 3); // status rounds to 3 places
    // Why fewer GPUs than the budget are paid, as /v1/budget splits it.
    const below = (await s.request('GET', '/v1/budget')).body.control.belowBudget;
    const belowMetric = (reason: string) =>
      Number(new RegExp(`^boa_gpus_below_budget\\{reason="${reason}"\\} (\\S+)$`, 'm').exec(now)?.[1]);
    expect(belowMetric('waiting')).toBeCloseTo(below.waitingGpus, 3);
    expect(belowMetric('usable')).toBeCloseTo(below.usableGpus, 3);
    expect(belowMetric('unusable')).toBeCloseTo(below.unusableGpus, 3);
    expect(belowMetric('unusable') + belowMetric('usable') + belowMetric('waiting')).toBeCloseTo(
      40 - status.gpus.paid,
      3,
    );
  });
});

describe('paid now, while nodes boot', () => {
  it('counts only billed nodes in status, /metrics and CloudWatch, as the ledger does', async () => {
    const s = await started();
    // As the EKS pool lists them: an instance still pending (not ready) is not billed yet.
    const pool = s.service.deps.pool;
    const listNodes = pool.listNodes.bind(pool);
    pool.listNodes = async () =>
      (await listNodes()).map((node) => (node.ready ? node : { ...node, billed: false }));
    const published: Array<readonly MetricDatum[]> = [];
    const sink = s.service.deps.metrics;
    const put = sink.put.bind(sink);
    sink.put = async (metrics, at) => {
      published.push(metrics);
      await put(metrics, at);
    };
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    await s.request('POST', '/v1/jobs', { class: 'cifar10' });
    await s.ticks(2); // nodes asked for, booting
    const status = (await s.request('GET', '/v1/status')).body;
    const nodes = s.service.state.nodes; // what the last tick listed
    expect(nodes.some((n) => n.billed === false)).toBe(true);
    const billedGpus = nodes.filter((n) => n.billed !== false).reduce((sum, n) => sum + n.gpus, 0);
    expect(status.gpus.paid).toBe(billedGpus);
    expect(status.gpus.paid).toBeLessThan(nodes.reduce((sum, n) => sum + n.gpus, 0));
    const metrics = (await s.request('GET', '/metrics')).body;
    expect(metrics).toContain(`boa_gpus{kind="paid"} ${billedGpus}\n`);
    const below = (await s.request('GET', '/v1/budget')).body.control.belowBudget;
    expect(below.gpus).toBeCloseTo(40 - status.gpus.paid, 6);
    const cloudWatch = published.at(-1)?.find((m) => m.name === 'PaidGpuHoursPerHour');
    expect(cloudWatch?.value).toBe(billedGpus);
  });
});
