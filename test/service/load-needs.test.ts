/**
 * What the load needs (service.loadNeeds, in /v1/status and /v1/budget) follows a burst at once: the
 * minute's cache holds only while no submission, class or waiting job has changed the load. The
 * frontier (/v1/frontier, `boa frontier`) starts there: it is drawn for the same load.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startService } from './harness.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

describe('what the load needs', () => {
  it('rises with a burst of submissions within the same minute', async () => {
    const s = await startService();
    cleanups.push(s.close);
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 })).status).toBe(200);
    const needs = async () =>
      (await s.request('GET', '/v1/budget')).body.control.loadNeedsGpuHoursPerHour as number;
    const before = await needs();
    for (let i = 0; i < 20; i++)
      expect((await s.request('POST', '/v1/jobs', { class: 'bert' })).status).toBe(201);
    // The clock has not moved: only a cache keyed on the load sees the burst.
    const after = await needs();
    expect(after).toBeGreaterThan(before);
    expect(await needs()).toBe(after);
  });

  it('follows a class replaced within the same minute: its prior rate, then its work', async () => {
    const s = await startService();
    cleanups.push(s.close);
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 400 })).status).toBe(200);
    const needs = async () =>
      (await s.request('GET', '/v1/budget')).body.control.loadNeedsGpuHoursPerHour as number;
    const before = await needs();
    const profile = s.service.state.classes.get('bert')!.profile;
    // The clock has not moved, and the class count is the same: only the class changed.
    const put = async (body: Record<string, unknown>) =>
      expect((await s.request('PUT', '/v1/classes/bert', body)).status).toBe(200);
    await put({ profile, priorRatePerHour: 2 });
    const withPrior = await needs();
    expect(withPrior).toBeGreaterThan(before);
    const doubled = {
      ...profile,
      epochs: profile.epochs.map((e) => ({ ...e, workSeconds: 2 * e.workSeconds })),
    };
    await put({ profile: doubled });
    expect(await needs()).toBeGreaterThan(1.5 * (withPrior - before) + before);
  });

  it('is where the frontier begins: the frontier is drawn for the load the plan is made for', async () => {
    const s = await startService();
    cleanups.push(s.close);
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 })).status).toBe(200);
    for (let i = 0; i < 20; i++)
      expect((await s.request('POST', '/v1/jobs', { class: 'bert' })).status).toBe(201);
    const needs = (await s.request('GET', '/v1/budget')).body.control.loadNeedsGpuHoursPerHour as number;
    const frontier = (await s.request('GET', '/v1/frontier')).body;
    // The jobs waiting count as load (a burst is capped as arrivals), as in the plan and `boa status`.
    expect(frontier.ratesPerHour.bert).toBeCloseTo(s.service.loadRates().bert as number, 9);
    expect(frontier.ratesPerHour.bert).toBeGreaterThan(s.service.estimatedRates().bert as number);
    expect(frontier.minFeasibleBudget).toBeCloseTo(needs, 2);
  });
});
