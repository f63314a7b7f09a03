/**
 * What the ledger sums over a span: allocated GPU-time only within the span asked for, and a node
 * listed again paid from its first launch (billing counts until the service sees a node gone, never
 * less), read from SQL and from the in-memory sum alike; allocation samples never counted twice; and a
 * prune that takes only what ended before its cut.
 */
import { describe, expect, it } from 'vitest';
import { openDb } from '../../src/store/db.ts';
import { LEDGER_PRUNED_BEFORE, Repository } from '../../src/store/repository.ts';

function withRepo(test: (repo: Repository, reopen: () => Repository) => void): void {
  const db = openDb(':memory:');
  try {
    test(new Repository(db), () => new Repository(db));
  } finally {
    db.$client.close();
  }
}

describe('ledger totals over a span', () => {
  it('count only the part of an allocation sample within the span', () => {
    withRepo((repo) => {
      repo.transaction(() => {
        repo.ledger.recordAllocation(0, 1000, 4);
        repo.ledger.recordAllocation(1000, 2000, 2);
      });
      // 500 ms of each sample fall within [500, 1500].
      expect(repo.ledger.ledgerTotals(500, 1500).allocatedGpuMs).toBe(500 * 4 + 500 * 2);
      expect(repo.ledger.ledgerTotals(0, 2000).allocatedGpuMs).toBe(1000 * 4 + 1000 * 2);
    });
  });

  it('count an allocation sample that reaches back before the last one ends only once', () => {
    withRepo((repo) => {
      repo.transaction(() => repo.ledger.recordAllocation(0, 1000, 4));
      // A restart resuming from an older cursor: [500, 1000] is already counted.
      repo.transaction(() => repo.ledger.recordAllocation(500, 1500, 4));
      expect(repo.ledger.ledgerTotals(0, 1500).allocatedGpuMs).toBe(1500 * 4);
    });
  });

  it('pay a node listed again from its first launch, the hours it was not listed included', () => {
    withRepo((repo, reopen) => {
      repo.transaction(() => repo.ledger.observeNodes([{ id: 'n1', gpus: 4, launchedAt: 0 }], 10));
      repo.transaction(() => repo.ledger.observeNodes([], 100));
      // Listed again, the cloud reporting a later launch: the row keeps its first.
      repo.transaction(() => repo.ledger.observeNodes([{ id: 'n1', gpus: 4, launchedAt: 150 }], 200));
      expect(reopen().ledger.paidGpuMs(0, 300)).toBe(4 * 300);
      expect(repo.ledger.paidGpuMsFrom([0, 50], 300)).toEqual([4 * 300, 4 * 250]);
    });
  });
});

describe('a prune of the ledger', () => {
  it('keeps the nodes still paid for, however long ago they launched', () => {
    withRepo((repo, reopen) => {
      repo.transaction(() =>
        repo.ledger.observeNodes(
          [
            { id: 'old', gpus: 4, launchedAt: 0 },
            { id: 'gone', gpus: 2, launchedAt: 0 },
          ],
          0,
        ),
      );
      repo.transaction(() => repo.ledger.observeNodes([{ id: 'old', gpus: 4, launchedAt: 0 }], 1000));
      expect(repo.pruneBefore(5000, 10_000)).toBeGreaterThan(0);
      // 'gone' went at 1000, before the cut; 'old' is paid still.
      expect(reopen().ledger.paidGpuMs(6000, 10_000)).toBe(4 * 4000);
      expect(repo.getSetting(LEDGER_PRUNED_BEFORE)).toBe(5000);
    });
  });

  it('never moves where the ledger is whole from back to an earlier cut', () => {
    withRepo((repo) => {
      repo.transaction(() => repo.ledger.observeNodes([{ id: 'a', gpus: 1, launchedAt: 0 }], 0));
      repo.transaction(() => repo.ledger.observeNodes([], 1000));
      expect(repo.pruneBefore(5000, 10_000)).toBeGreaterThan(0);
      // A node charged after the prune, gone before the cut, pruned by an earlier cut (a clock
      // stepped back): rows before 5000 are gone all the same.
      repo.transaction(() =>
        repo.ledger.chargeUnseenNodes([{ id: 'b', gpus: 1, launchedAt: 0, goneAt: 2000 }], 10_000),
      );
      expect(repo.pruneBefore(3000, 10_000)).toBeGreaterThan(0);
      expect(repo.getSetting(LEDGER_PRUNED_BEFORE)).toBe(5000);
    });
  });
});
