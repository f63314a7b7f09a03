/**
 * A node group whose maximum is below the budget's GPUs: the jobs are narrowed by price to what the
 * group can hold, as they are to the budget's ceiling, rather than to the budget's GPUs, which left the
 * jobs the group could not place waiting whole beside wider ones. Waiting there is for GPUs, not for the
 * budget.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startService } from './harness.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

describe('a node group smaller than the budget', () => {
  it("narrows the jobs to the group's GPUs, every one used, none said to wait for the budget", async () => {
    // Two nodes of 4 GPUs at most, booting at once; the budget's ceiling allows about 11.
    const s = await startService({ config: { local: { maxNodes: 2, bootSeconds: 0, releaseSeconds: 0 } } });
    cleanups.push(s.close);
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    // Ten jobs: eight run on a GPU each, two wait, for GPUs and not for the budget.
    for (let i = 0; i < 10; i++) await s.request('POST', '/v1/jobs', { class: 'cifar10' });
    await s.ticks(3);
    const jobs = [...s.service.state.jobs.values()];
    const running = jobs.filter((job) => job.state === 'running');
    const planned = running.map((job) => job.widths?.[job.statEpoch] ?? 0);
    // The plan's widths need more than the group's 8 GPUs: narrowed, all 8 GPUs run jobs.
    expect(jobs.reduce((sum, job) => sum + (job.widths?.[job.statEpoch] ?? 0), 0)).toBeGreaterThan(8);
    expect(running.reduce((sum, job) => sum + job.width, 0)).toBe(8);
    expect(running.some((job, i) => job.width < (planned[i] as number))).toBe(true);
    // More jobs run than could at the plan's widths, even at the narrowest of them.
    const narrowestPlanned = Math.min(...jobs.map((job) => job.widths?.[job.statEpoch] ?? Infinity));
    expect(running.length).toBeGreaterThan(Math.floor(8 / narrowestPlanned));
    expect(jobs.some((job) => job.queuedForBudget || job.narrowedByBudget)).toBe(false);
    const status = (await s.request('GET', '/v1/status')).body;
    expect(status.budget.queuedForBudget).toBe(0);
    const waiting = jobs.filter((j) => j.state === 'waiting');
    expect(waiting.length).toBeGreaterThan(0);
    for (const job of waiting)
      expect((await s.request('GET', `/v1/jobs/${job.id}`)).body.waitingFor).toBe('gpus');
  });
});
