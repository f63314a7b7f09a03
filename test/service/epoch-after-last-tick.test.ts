/**
 * A job's `epochAfterLastTick`: true while it moved into its statistical epoch after the last tick, so
 * its width is still the epoch before's and the plan's width for the new one comes at the next tick.
 * `boa jobs list` said "nodes booting or placement" then, with every node ready (a newcomer).
 */
import { afterEach, expect, it } from 'vitest';
import { startService } from './harness.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

it('is true from a report of the next epoch to the next tick, and not for epoch 0 timed again', async () => {
  const s = await startService({
    config: { tickSeconds: 60, local: { maxNodes: 8, bootSeconds: 0, releaseSeconds: 0 }, budget: 40 },
  });
  cleanups.push(s.close);
  await s.service.planner.idle();
  const { job, token } = s.service.registerJob('cifar10', 'a');
  await s.ticks(3);
  expect(job.state).toBe('running');
  const view = async () => (await s.request('GET', `/v1/jobs/${job.id}`)).body;
  expect((await view()).epochAfterLastTick).toBe(false);
  // Its first report of epoch 0 starts that epoch's clock again, after the tick: no new epoch.
  s.clock.t += 5_000;
  const report = (statEpoch: number) =>
    s.request('POST', `/v1/jobs/${job.id}/progress`, { statEpoch, generation: job.generation }, token);
  expect((await report(0)).status).toBe(200);
  expect((await view()).epochAfterLastTick).toBe(false);
  s.clock.t += 5_000;
  expect((await report(1)).status).toBe(200);
  expect(await view()).toMatchObject({ statEpoch: 1, epochAfterLastTick: true });
  const listed = (await s.request('GET', '/v1/jobs')).body.jobs[0];
  expect(listed.epochAfterLastTick).toBe(true);
  await s.ticks(1);
  expect((await view()).epochAfterLastTick).toBe(false);
});
