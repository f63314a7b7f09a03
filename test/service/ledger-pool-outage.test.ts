/**
 * A restart while the node pool does not answer (AWS throttling, an outage) closes nothing in the
 * ledger: the nodes it holds open are paid until a listing says they are gone. Closing them at the
 * first tick's empty view dropped their paid hours for good when they went during the outage, and the
 * ceiling handed that back as room.
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

it('keeps paying the nodes the ledger holds open through ticks whose listing failed after a restart', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'boa-ledger-outage-'));
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
  const held = first.service.state.nodes.length;
  expect(held).toBeGreaterThan(0);
  await first.close();

  const second = await startService({ dataDir, clock, config });
  cleanups.push(second.close);
  second.pool.listNodes = async () => {
    throw new Error('ThrottlingException: Rate exceeded');
  };
  const from = clock.now();
  for (let i = 0; i < 60; i++) {
    await second.scheduler.tick();
    clock.advance(60);
  }
  // An hour of the outage: every node the first service held is still paid.
  const paid = second.service.ledgerAverages(from, from + HOUR).paidGpuHoursPerHour;
  expect(paid).toBeCloseTo(held * 4, 6);
});
