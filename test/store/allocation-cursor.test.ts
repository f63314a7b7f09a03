/**
 * The allocation cursor (where the next sample starts) follows the store through a rolled-back
 * transaction: a sample that was never committed does not push the next one past its interval.
 */
import Database from 'better-sqlite3';
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

  // Broke: the ledger's mirrors were re-read in the rollback's catch; a disk that failed the write and
  // then that read left them half cleared (the node gone never closed, paid on; the next sample started
  // where the rolled-back one ended, its interval lost), and the read's error replaced the write's.
  it("follow the store when the disk fails the rollback's read too", () => {
    const db = openDb(':memory:');
    try {
      const repo = new Repository(db);
      repo.transaction(() => {
        repo.ledger.observeNodes([{ id: 'n1', gpus: 8, launchedAt: 0 }], 0);
        repo.ledger.recordAllocation(0, 1000, 4);
      });
      const hot = (repo.ledger as unknown as { hot: { openNodeIds: Database.Statement } }).hot;
      const read = hot.openNodeIds.all.bind(hot.openNodeIds);
      // The disk fails while the write is made and rolled back, then recovers.
      let diskFailing = true;
      hot.openNodeIds.all = ((...args: unknown[]) => {
        if (diskFailing) throw new Database.SqliteError('disk I/O error', 'SQLITE_IOERR_READ');
        return read(...args);
      }) as typeof hot.openNodeIds.all;
      expect(() =>
        repo.transaction(() => {
          repo.ledger.recordAllocation(1000, 2000, 4);
          throw new Database.SqliteError('disk I/O error', 'SQLITE_IOERR_WRITE');
        }),
      ).toThrow(expect.objectContaining({ code: 'SQLITE_IOERR_WRITE' }));
      diskFailing = false;
      // The next tick: n1 is gone, and the allocation since the last committed sample is recorded.
      repo.transaction(() => {
        repo.ledger.observeNodes([], 3000);
        repo.ledger.recordAllocation(1000, 3000, 4);
      });
      expect(repo.ledger.openNodeGpus()).toBe(0);
      expect(repo.ledger.ledgerTotals(0, 4000)).toEqual({ paidGpuMs: 8 * 3000, allocatedGpuMs: 4 * 3000 });
    } finally {
      db.$client.close();
    }
  });
});
