/**
 * Why the cluster pays less than the budget now (GET /v1/budget control.belowBudget): while a job
 * waits, all of it; once every job runs, what running jobs could still use at half a GPU's speedup
 * per GPU and what nothing present can use.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { usableExtraGpus } from '../../src/core/below-budget.ts';
import { epochSpeedups } from '../../src/core/profile.ts';
import { startService } from './harness.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

describe('the GPUs paid below the budget now', () => {
  it('are all for the jobs waiting while nodes boot, then split by what running jobs can use', async () => {
    const s = await startService();
    cleanups.push(s.close);
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 })).status).toBe(200);
    const below = async () => (await s.request('GET', '/v1/budget')).body.control.belowBudget;
    // Nothing paid, nothing waits: the whole budget is one nothing present can use.
    expect(await below()).toEqual({ gpus: 40, waitingGpus: 0, usableGpus: 0, unusableGpus: 40 });

    expect((await s.request('POST', '/v1/jobs', { class: 'cifar10' })).status).toBe(201);
    await s.ticks(1); // nodes asked for, booting: the job waits
    const waiting = await below();
    expect(waiting.gpus).toBeGreaterThan(0);
    expect(waiting).toEqual({
      gpus: waiting.gpus,
      waitingGpus: waiting.gpus,
      usableGpus: 0,
      unusableGpus: 0,
    });

    await s.ticks(3); // booted: the job runs
    const job = [...s.service.state.jobs.values()][0]!;
    expect(job.state).toBe('running');
    const paid = s.service.state.nodes.reduce((sum, n) => sum + n.gpus, 0);
    const running = await below();
    expect(running.gpus).toBeCloseTo(40 - paid, 3);
    expect(running.waitingGpus).toBe(0);
    expect(running.usableGpus + running.unusableGpus).toBeCloseTo(running.gpus, 3);
    // Usable: what its profile adds at half a GPU's speedup per GPU or better, less the idle GPUs paid.
    const table = epochSpeedups(s.service.state.classes.get('cifar10')!.profile, job.statEpoch)!;
    const usable = Math.max(0, usableExtraGpus(table, job.width, 0.5) - (paid - job.width));
    expect(running.usableGpus).toBeCloseTo(Math.min(running.gpus, usable), 3);
    expect(running.unusableGpus).toBeGreaterThan(0);
  });

  it('is none at or above the budget', async () => {
    const s = await startService();
    cleanups.push(s.close);
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 4 })).status).toBe(200);
    for (let i = 0; i < 3; i++)
      expect((await s.request('POST', '/v1/jobs', { class: 'bert' })).status).toBe(201);
    await s.ticks(4);
    expect(s.service.state.nodes.reduce((sum, n) => sum + n.gpus, 0)).toBeGreaterThanOrEqual(4);
    expect((await s.request('GET', '/v1/budget')).body.control.belowBudget).toEqual({
      gpus: 0,
      waitingGpus: 0,
      usableGpus: 0,
      unusableGpus: 0,
    });
  });
});
