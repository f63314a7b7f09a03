/**
 * The store's refusals by SQLite's extended codes as well as its primary ones: a 503 naming the cause,
 * not a 500 "internal error". SQLite reports a lock with its extended codes too (SQLITE_BUSY_SNAPSHOT
 * in WAL mode, SQLITE_BUSY_RECOVERY, SQLITE_LOCKED_SHAREDCACHE); before, only the bare SQLITE_BUSY and
 * SQLITE_LOCKED were store_busy.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { failTransactions } from '../helpers/store-fault.ts';
import { startService } from '../service/harness.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

async function started() {
  const s = await startService();
  cleanups.push(s.close);
  expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 })).status).toBe(200);
  return s;
}

describe('a lock reported with an extended code', () => {
  for (const code of ['SQLITE_BUSY_SNAPSHOT', 'SQLITE_BUSY_RECOVERY', 'SQLITE_LOCKED_SHAREDCACHE']) {
    it(`${code} is a 503 store_busy naming it; nothing is kept, and it goes through after`, async () => {
      const s = await started();
      failTransactions(s.db.$client, code, 'database is locked');
      const refused = await s.request('POST', '/v1/jobs', { class: 'cifar10', name: 'a' });
      expect(refused.status).toBe(503);
      expect(refused.body.error.code).toBe('store_busy');
      expect(refused.body.error.message).toContain(`(${code})`);
      expect((await s.request('GET', '/v1/jobs')).body.jobs).toEqual([]);
      expect((await s.request('POST', '/v1/jobs', { class: 'cifar10', name: 'a' })).status).toBe(201);
      expect((await s.request('GET', '/v1/jobs')).body.jobs.map((j: any) => j.name)).toEqual(['a']);
    });
  }
});
