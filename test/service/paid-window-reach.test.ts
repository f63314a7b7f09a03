/**
 * The spend ceiling's paid sums come from memory every tick (src/store/paid-window.ts), and so do the
 * ledger's window averages (plan inputs, views, metrics) and the dashboard's buckets, also after a
 * budget set later than the first start: none of them falls back to SQL over every ledger node.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ledgerSeries } from '../../src/api/routes/ledger.ts';
import { startService } from './harness.ts';

const HOUR = 3_600_000;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const fn of cleanups.splice(0)) await fn();
});

describe('paid sums read from memory', () => {
  it('serves the ceiling, the window averages and the ledger buckets without SQL', async () => {
    const s = await startService();
    cleanups.push(s.close);
    s.repo.ledger.observeNodes([{ id: 'a', gpus: 4, launchedAt: s.clock.t }], s.clock.t);
    s.clock.t += 2 * HOUR;
    s.repo.ledger.observeNodes([{ id: 'b', gpus: 4, launchedAt: s.clock.t }], s.clock.t);
    s.clock.t += HOUR;
    // The budget set three hours after the first start: its window is shorter than the ledger's.
    s.service.setBudget(40);
    s.clock.t += HOUR;
    const now = s.clock.t;
    const sql = vi.spyOn(
      (s.repo as unknown as { hot: { paidGpuMs: { get: (...args: unknown[]) => unknown } } }).hot.paidGpuMs,
      'get',
    );
    for (let i = 0; i < 3; i++) {
      expect(s.service.spendCeiling(now)?.debtGpuHours).toBeCloseTo(4 - 40, 6);
      // The window average since the first start (as plan inputs, views and metrics ask for it): node a
      // for 2 h, then b for 2 h.
      expect(s.service.ledgerAverages(now - 4 * HOUR, now).paidGpuHoursPerHour).toBeCloseTo(4, 6);
      // A dashboard's buckets, near now.
      expect(ledgerSeries(s.service, 24, 8).series).toHaveLength(8);
    }
    expect(sql).not.toHaveBeenCalled();
  });
});
