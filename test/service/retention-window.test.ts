/**
 * A budget window made longer at a restart does not read the hours pruned under the shorter one as
 * unpaid: 24 h kept 48 h of ledger, then 72 h read its first 24 h as nothing allocated (found in an
 * upgrade trial: the allocated average 7 -> 4.78, the plan's paid/allocated correction off with it).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { pruneOldRows } from '../../src/service/retention.ts';
import { ManualClock, startService } from './harness.ts';

const root = mkdtempSync(join(tmpdir(), 'boa-retention-window-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const config = { tickSeconds: 600, local: { bootSeconds: 0, releaseSeconds: 0, maxNodes: 4 } };

describe('a longer budget window after a prune', () => {
  it.each([
    ['pruned by this version', false],
    // Before 2026-12-02 a prune left no record of where it cut: found in review, the upgrade's case.
    ['pruned by a version that kept no record of it', true],
  ])(
    'starts where the ledger is whole, not at the pruned hours (%s)',
    async (name, unrecorded) => {
      const dataDir = join(root, name.replaceAll(' ', '-'));
      const clock = new ManualClock();
      const first = await startService({ dataDir, clock, config: { ...config, budgetWindowHours: 24 } });
      await first.request('PUT', '/v1/budget', { gpuHoursPerHour: 8 });
      const job = (await first.request('POST', '/v1/jobs', { class: 'imagenet' })).body;
      // Three days of a job kept alive by its polls, pruned every hour as the service does.
      for (let tick = 0; tick < 3 * 24 * 6; tick++) {
        await first.request('GET', `/v1/jobs/${job.id}/allocation`, undefined, job.token);
        await first.ticks(1);
        if (tick % 6 === 0) pruneOldRows(first.service);
      }
      const before = (await first.request('GET', '/v1/budget')).body.window;
      await first.close();
      if (unrecorded) {
        const db = new Database(join(dataDir, 'boa.sqlite'));
        db.prepare("DELETE FROM settings WHERE key = 'ledgerPrunedBefore'").run();
        db.close();
      }

      const again = await startService({ dataDir, clock, config: { ...config, budgetWindowHours: 72 } });
      await again.request('GET', `/v1/jobs/${job.id}/allocation`, undefined, job.token);
      await again.ticks(1);
      const after = (await again.request('GET', '/v1/budget')).body.window;
      await again.close();

      expect(before.allocatedGpuHoursPerHour).toBeGreaterThan(6);
      // The ledger kept 48 hours (the 24-hour window and a day): the window covers those, not 72.
      expect(after.hours).toBeGreaterThan(47);
      expect(after.hours).toBeLessThan(50);
      expect(after.allocatedGpuHoursPerHour).toBeCloseTo(before.allocatedGpuHoursPerHour, 0);
    },
    120_000,
  );
});
