/**
 * A restart while the node pool does not answer (AWS throttling, an API server blip, an outage):
 * - the ledger closes nothing: the nodes it holds open are paid until a listing says they are gone.
 *   Closing them at the first tick's empty view dropped their paid hours for good when they went during
 *   the outage, and the ceiling handed that back as room.
 * - the jobs stay as they are and the node count is left alone until a listing has come back: deciding
 *   on no nodes took every running job off its nodes, a restart of each (found in review); then the
 *   tick decides as always.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { ManualClock, startService } from './harness.ts';

const HOUR = 3_600_000;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

type Service = Awaited<ReturnType<typeof startService>>;

/**
 * A service that ran three jobs for three ticks and was stopped, and the one started after it over the
 * same data dir, its pool's listing failing (`answer()` puts it back).
 */
async function restartedDuringOutage(
  inspect: (first: Service) => Promise<void> | void,
): Promise<{ second: Service; clock: ManualClock; answer: () => void }> {
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
  await inspect(first);
  await first.close();
  const second = await startService({ dataDir, clock, config });
  cleanups.push(second.close);
  const listNodes = second.pool.listNodes.bind(second.pool);
  second.pool.listNodes = async () => {
    throw new Error('ThrottlingException: Rate exceeded');
  };
  return { second, clock, answer: () => void (second.pool.listNodes = listNodes) };
}

const jobsOf = (s: Service) =>
  [...s.service.state.jobs.values()].map((j) => ({
    id: j.id,
    state: j.state,
    generation: j.generation,
    allocation: j.allocation.join(','),
  }));

it('keeps paying the nodes the ledger holds open through ticks whose listing failed after a restart', async () => {
  let held = 0;
  const { second, clock } = await restartedDuringOutage((first) => {
    held = first.service.state.nodes.length;
  });
  expect(held).toBeGreaterThan(0);
  const from = clock.now();
  for (let i = 0; i < 60; i++) {
    await second.scheduler.tick();
    clock.advance(60);
  }
  // An hour of the outage: every node the first service held is still paid.
  const paid = second.service.ledgerAverages(from, from + HOUR).paidGpuHoursPerHour;
  expect(paid).toBeCloseTo(held * 4, 6);
});

it('keeps running jobs where they run until a listing comes back, then decides as always', async () => {
  let before: ReturnType<typeof jobsOf> = [];
  let desiredBefore = 0;
  const { second, answer } = await restartedDuringOutage(async (first) => {
    before = jobsOf(first);
    desiredBefore = (await first.pool.describe()).desiredSize;
  });
  expect(before.map((j) => j.state)).toEqual(['running', 'running', 'running']);
  await second.ticks(2);
  expect(jobsOf(second)).toEqual(before);
  expect((await second.pool.describe()).desiredSize).toBe(desiredBefore);
  answer();
  await second.ticks(1);
  expect(jobsOf(second)).toEqual(before);
});
