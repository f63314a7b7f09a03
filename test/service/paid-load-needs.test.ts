/**
 * What the load needs as a budget: the cheapest plan's GPUs allocated to jobs, times the window's paid
 * per allocated (whole nodes, boot). A budget between the two still queues jobs, so the warning of
 * `PUT /v1/budget`, `boa status` and `boa frontier` compare the budget with the paid figure.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { renderFrontier } from '../../src/cli/commands/frontier.ts';
import { startService } from './harness.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

describe('the load needs, paid', () => {
  it('is the allocated need times the window overhead, and a budget between the two is warned about', async () => {
    const s = await startService({ config: { tickSeconds: 30 } });
    cleanups.push(s.close);
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 })).status).toBe(200);
    // A prior rate gives the load a need (a burst of submissions alone is not a rate).
    const profile = s.service.state.classes.get('cifar10')!.profile;
    const prior = await s.request('PUT', '/v1/classes/cifar10', { profile, priorRatePerHour: 30 });
    expect(prior.status).toBe(200);
    for (let i = 0; i < 6; i++)
      expect((await s.request('POST', '/v1/jobs', { class: 'cifar10' })).status).toBe(201);
    // An hour of ticks: nodes booting and whole nodes paid put the ledger's paid above its allocated.
    await s.ticks(120);
    const ratio = s.service.overheadRatio();
    expect(ratio).toBeGreaterThan(1.02);
    const control = (await s.request('GET', '/v1/budget')).body.control;
    const allocated = control.loadNeedsGpuHoursPerHour as number;
    const paid = control.loadNeedsPaidGpuHoursPerHour as number;
    expect(paid).toBeCloseTo(allocated * ratio, 2);
    const status = (await s.request('GET', '/v1/status')).body;
    expect(status.budget.loadNeedsPaidGpuHoursPerHour).toBeCloseTo(paid, 2);

    const between = Number(((allocated + paid) / 2).toFixed(3));
    const set = await s.request('PUT', '/v1/budget', { gpuHoursPerHour: between });
    expect(set.status).toBe(200);
    expect(set.body.warning).toMatch(
      /is below [\d.]+ GPU-hours\/hour, the minimum for the estimated arrivals \([\d.]+ allocated to jobs/,
    );
    const frontier = (await s.request('GET', '/v1/frontier')).body;
    expect(frontier.minFeasiblePaidBudget).toBeCloseTo(frontier.minFeasibleBudget * ratio, 6);
    expect(renderFrontier(frontier)).toMatch(/^your budget\s+[\d.]+ GPU-hours\/hour: below the minimum/m);

    const above = Number((paid * 1.05).toFixed(3));
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: above })).body.warning).toBeNull();
  });
});
