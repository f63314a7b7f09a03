import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { nextDraw } from '../../src/core/shares.ts';
import { ManualClock, startService } from './harness.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

const config = {
  priorRates: { cifar10: 8, bert: 1 },
  local: { maxNodes: 64, bootSeconds: 60, releaseSeconds: 30 },
};

/** A service at `budget` with one cifar10 job submitted and three ticks run. */
async function cifar10JobAt(budget: number) {
  const s = await startService({ config });
  cleanups.push(s.close);
  expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: budget })).status).toBe(200);
  await s.service.planner.idle();
  const { id, token } = (await s.request('POST', '/v1/jobs', { class: 'cifar10' })).body;
  await s.ticks(3);
  return { s, id, token };
}

describe('jobs follow the current plan', () => {
  it('a job started on narrow widths widens when a newer plan moves its width 2x or more', async () => {
    // Near cifar10's minimum budget its plan is narrow.
    const { s, id, token } = await cifar10JobAt(9);
    const narrow = (await s.request('GET', `/v1/jobs/${id}/allocation`, undefined, token)).body;
    expect(narrow.state).toBe('running');

    // A budget ten times larger: the plan's widths for its current epoch are at least twice as wide.
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 90 })).status).toBe(200);
    await s.service.planner.idle();
    const plan = (await s.request('GET', '/v1/plan')).body;
    const planned: number[][] = plan.widths.cifar10.map((share: { widths: number[] }) => share.widths);
    expect(Math.min(...planned.map((w) => w[0] as number))).toBeGreaterThanOrEqual(2 * narrow.width);

    await s.ticks(3);
    const wide = (await s.request('GET', `/v1/jobs/${id}/allocation`, undefined, token)).body;
    expect(wide.state).toBe('running');
    expect(wide.width).toBeGreaterThanOrEqual(2 * narrow.width);
    expect(wide.generation).toBeGreaterThan(narrow.generation);
    const job = (await s.request('GET', `/v1/jobs/${id}`)).body;
    expect(planned).toContainEqual(job.widths);
  });

  it('keeps a started job on its current width while a newer plan moves it less than 2x', async () => {
    // At 15 cifar10's plan is 4 GPUs for two epochs, then 11 (measured; asserted below).
    const { s, id, token } = await cifar10JobAt(15);
    await s.request('POST', `/v1/jobs/${id}/progress`, { statEpoch: 2 }, token);
    await s.ticks(3);
    const before = (await s.request('GET', `/v1/jobs/${id}/allocation`, undefined, token)).body;
    expect(before).toMatchObject({ state: 'running', width: 11 });

    // At 25 the plan gives every epoch 16: within 2x of 11, so the job keeps 11 in this epoch (no
    // restart) and takes 16 from the next one on.
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 25 })).status).toBe(200);
    await s.service.planner.idle();
    const plan = (await s.request('GET', '/v1/plan')).body;
    expect(plan.widths.cifar10).toEqual([{ share: 1, widths: Array(8).fill(16) }]);
    await s.ticks(2);
    const after = (await s.request('GET', `/v1/jobs/${id}/allocation`, undefined, token)).body;
    expect(after).toMatchObject({ width: 11, generation: before.generation });
    expect((await s.request('GET', `/v1/jobs/${id}`)).body.widths).toEqual([16, 16, 11, 16, 16, 16, 16, 16]);
    await s.request('POST', `/v1/jobs/${id}/progress`, { statEpoch: 3 }, token);
    await s.ticks(2);
    expect((await s.request('GET', `/v1/jobs/${id}/allocation`, undefined, token)).body.width).toBe(16);
  });

  it("stores each job's draw and continues the class's sequence after a restart", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'boa-draws-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const clock = new ManualClock();
    const drawOf = (s: Awaited<ReturnType<typeof startService>>, id: number) =>
      s.service.deps.repo.getJob(id)?.draw;

    const first = await startService({ dataDir, clock, config });
    const ids: number[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await first.request('POST', '/v1/jobs', { class: 'cifar10' })).body.id);
    const bert = (await first.request('POST', '/v1/jobs', { class: 'bert' })).body.id;
    const draws = ids.map((id) => drawOf(first, id) as number);
    expect(draws[0]).toBe(nextDraw(undefined, 'cifar10'));
    expect(draws[1]).toBeCloseTo(nextDraw(draws[0], 'cifar10'), 12);
    expect(draws[2]).toBeCloseTo(nextDraw(draws[1], 'cifar10'), 12);
    // Each class has its own sequence.
    expect(drawOf(first, bert)).toBe(nextDraw(undefined, 'bert'));
    await first.close();

    const second = await startService({ dataDir, clock, config });
    cleanups.push(second.close);
    expect(second.service.state.jobs.get(ids[2] as number)?.draw).toBe(draws[2]);
    const next = (await second.request('POST', '/v1/jobs', { class: 'cifar10' })).body.id;
    expect(drawOf(second, next)).toBeCloseTo(nextDraw(draws[2], 'cifar10'), 12);
  });
});
