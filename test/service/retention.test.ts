/** Rows older than the longest window (plus a day) are pruned; what the service still needs stays. */
import { afterEach, describe, expect, it } from 'vitest';
import { pruneOldRows } from '../../src/service/retention.ts';
import { startService } from './harness.ts';

type Booted = Awaited<ReturnType<typeof startService>>;
let boa: Booted | undefined;
afterEach(async () => {
  await boa?.close();
  boa = undefined;
});

const count = (b: Booted, table: string) =>
  b.db.$client.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;

describe('pruning old rows', () => {
  it('deletes ledger samples, plans and resizes past the window, keeping the latest plan and resize', async () => {
    boa = await startService({ config: { tickSeconds: 600 } });
    await boa.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    await boa.request('POST', '/v1/jobs', { class: 'cifar10' });
    await boa.ticks(12); // two hours of ticks
    await boa.request('PUT', '/v1/budget', { gpuHoursPerHour: 41 });
    await boa.ticks(1);
    const samples = count(boa, 'allocation_samples');
    expect(samples).toBeGreaterThan(5);
    expect(count(boa, 'plans')).toBeGreaterThan(1);

    expect(pruneOldRows(boa.service)).toBe(0); // nothing is old yet
    boa.clock.advance(49 * 3600); // past the 24 h window plus a day of slack
    expect(pruneOldRows(boa.service)).toBeGreaterThan(0);
    expect(count(boa, 'allocation_samples')).toBe(0);
    expect(count(boa, 'plans')).toBeGreaterThanOrEqual(1);
    expect(boa.repo.latestPlan()).toBeDefined();
    expect(count(boa, 'resizes')).toBeLessThanOrEqual(1);
    expect(count(boa, 'jobs')).toBe(1);
    // The service still ticks and plans on the pruned tables.
    await boa.ticks(2);
    expect((await boa.request('GET', '/v1/plan')).status).toBe(200);
  });
});

describe('pruning and the demand ratio', () => {
  it('keeps the allocation samples a long half-life still reads, so a prune does not move the ratio', async () => {
    boa = await startService({ config: { tickSeconds: 600, demandHalfLifeHours: 12 } });
    await boa.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    await boa.request('POST', '/v1/jobs', { class: 'cifar10' });
    await boa.ticks(12);
    const samples = count(boa, 'allocation_samples');
    // 50 hours on: past the 24 h windows and a day, within the ratio's 5 half-lives (60 h) and a day.
    boa.clock.advance(50 * 3600);
    pruneOldRows(boa.service);
    expect(count(boa, 'allocation_samples')).toBe(samples);
    boa.clock.advance(35 * 3600); // 85 hours: past 60 + 24
    pruneOldRows(boa.service);
    expect(count(boa, 'allocation_samples')).toBe(0);
  });
});

describe('what GET /v1/budget reports across a prune', () => {
  it('the averages since the budget was set do not count pruned time as time nothing was paid', async () => {
    boa = await startService({ config: { tickSeconds: 3600 } });
    await boa.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    await boa.request('POST', '/v1/jobs', { class: 'cifar10' });
    await boa.ticks(60); // a job (lost once its lease runs out) and its nodes early on, then idle hours
    await boa.request('POST', '/v1/jobs', { class: 'cifar10' });
    await boa.ticks(12); // three days since the budget was set, the last hours paid again
    const before = (await boa.request('GET', '/v1/budget')).body;
    expect(before.sinceSet.paidGpuHoursPerHour).toBeGreaterThan(0);
    expect(pruneOldRows(boa.service)).toBeGreaterThan(0);
    const after = (await boa.request('GET', '/v1/budget')).body;
    expect(after.sinceSet).toEqual(before.sinceSet);
    expect(after.window).toEqual(before.window);
  });
});
