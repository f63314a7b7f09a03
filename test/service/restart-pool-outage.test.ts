/**
 * A restart whose first node listings fail (an API server blip, throttling past the retries): until one
 * comes back boa knows no nodes, and deciding on none took every running job off its nodes, a restart
 * of each from its checkpoint (found in review). Now the jobs stay as they are and the node count is
 * left alone until a listing has come back; then the tick decides as always.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { ManualClock, startService } from './harness.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

it('a restart whose first listings fail keeps running jobs where they run, then decides once one comes back', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'boa-restart-outage-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const clock = new ManualClock();
  const config = {
    tickSeconds: 60,
    local: { maxNodes: 8, bootSeconds: 0, releaseSeconds: 0 },
    budget: 40,
    priorRates: { cifar10: 2 },
  };
  const first = await startService({ dataDir, clock, config });
  await first.service.planner.idle();
  for (let i = 0; i < 3; i++) first.service.registerJob('cifar10', `job${i}`);
  await first.ticks(3);
  const jobs = (s: typeof first) =>
    [...s.service.state.jobs.values()].map((j) => ({
      id: j.id,
      state: j.state,
      generation: j.generation,
      allocation: j.allocation.join(','),
    }));
  const before = jobs(first);
  expect(before.map((j) => j.state)).toEqual(['running', 'running', 'running']);
  const desiredBefore = (await first.pool.describe()).desiredSize;
  await first.close();

  const second = await startService({ dataDir, clock, config });
  cleanups.push(second.close);
  const listNodes = second.pool.listNodes.bind(second.pool);
  second.pool.listNodes = async () => {
    throw new Error('ThrottlingException: Rate exceeded');
  };
  await second.ticks(2);
  expect(jobs(second)).toEqual(before);
  expect((await second.pool.describe()).desiredSize).toBe(desiredBefore);

  second.pool.listNodes = listNodes;
  await second.ticks(1);
  expect(jobs(second)).toEqual(before);
});
