/**
 * The allocation cursor (where the next sample starts) follows the store through a rolled-back
 * transaction: a sample that was never committed does not push the next one past its interval.
 */
import { describe, expect, it } from 'vitest';
import { openDb } from '../../src/store/db.ts';
import { Repository } from '../../src/store/repository.ts';

describe('allocation samples after a roll-back', () => {
  it('start where the last committed sample ends', () => {
    const db = openDb(':memory:');
    try {
      const repo = new Repository(db);
      repo.transaction(() => repo.ledger.recordAllocation(0, 1000, 4));
      expect(() =>
        repo.transaction(() => {
          repo.ledger.recordAllocation(1000, 2000, 4);
          throw new Error('SQLITE_FULL: database or disk is full');
        }),
      ).toThrow('SQLITE_FULL');
      expect(repo.ledger.lastAllocationTo()).toBe(1000);
      repo.transaction(() => repo.ledger.recordAllocation(1000, 3000, 4));
      expect(repo.ledger.ledgerTotals(0, 3000).allocatedGpuMs).toBe(3000 * 4);
    } finally {
      db.$client.close();
    }
  });
});
