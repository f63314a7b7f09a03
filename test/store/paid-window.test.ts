/**
 * The spend ceiling's paid sum, read from memory every tick (src/store/paid-window.ts), equals the
 * store's own SQL over ledger_nodes: nodes launched, gone, listed again (a reopened row keeps its
 * first launch), rows pruned, the repository reopened on the same database, a transaction rolled back;
 * and for several starts at once (the spend ceiling's look-backs).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openDb } from '../../src/store/db.ts';
import { Repository } from '../../src/store/repository.ts';
import { PaidWindow } from '../../src/store/paid-window.ts';

const SQL =
  'select coalesce(sum(gpus * max(0, min(coalesce(gone_at, @to), @to) - max(launched_at, @from))), 0) ' +
  'from ledger_nodes where coalesce(gone_at, @to) > @from';

const step = fc.record({
  listed: fc.uniqueArray(fc.integer({ min: 0, max: 11 }), { maxLength: 8 }),
  advance: fc.integer({ min: 1, max: 50 }),
  window: fc.integer({ min: 0, max: 400 }),
  reopenStore: fc.boolean(),
  rollBack: fc.boolean(),
  prune: fc.boolean(),
});

describe('paid GPU-time mirrored in memory', () => {
  it('equals the SQL sum over any sequence of listings, restarts, prunes and roll-backs', () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 40 }), (steps) => {
        const db = openDb(':memory:');
        try {
          const sql = db.$client.prepare(SQL).pluck();
          let repo = new Repository(db);
          let now = 1000;
          for (const s of steps) {
            now += s.advance;
            // GPUs differ by node; launch times before now, some before the window.
            const nodes = s.listed.map((n) => ({ id: `n${n}`, gpus: 1 + (n % 4), launchedAt: now - 7 * n }));
            if (s.rollBack) {
              expect(() =>
                repo.transaction(() => {
                  repo.ledger.observeNodes([], now);
                  throw new Error('rolled back');
                }),
              ).toThrow('rolled back');
            }
            repo.transaction(() => repo.ledger.observeNodes(nodes, now));
            // As the service prunes: only rows gone before any window a query reads.
            if (s.prune) repo.pruneBefore(now - 600);
            if (s.reopenStore) repo = new Repository(db);
            // The ceiling's window moves forward; now and then an older start (ledger averages).
            const from = Math.max(0, now - s.window);
            for (const [f, t] of [
              [from, now],
              [from, now + 20],
              [from - 100, now],
            ] as const) {
              expect(repo.ledger.paidGpuMs(f, t)).toBe(sql.get({ from: f, to: t }));
            }
            // The ceiling's look-backs in one pass: spans covering every start, and spans that do not.
            const froms = [from, from + 3, from + 11, Math.min(now, from + 40)];
            const sums = repo.ledger.paidGpuMsFrom(froms, now);
            froms.forEach((f, i) => expect(sums[i]).toBe(sql.get({ from: f, to: now })));
          }
        } finally {
          db.$client.close();
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe('what the in-memory sum keeps', () => {
  it('a single span asked for (a ledger bucket, a window average) forgets nothing the ceiling reads', () => {
    const window = new PaidWindow(
      [
        { id: 'a', gpus: 4, launchedAt: 0, goneAt: 120 },
        { id: 'b', gpus: 2, launchedAt: 50, goneAt: null },
      ],
      0,
    );
    // The ceiling's look-backs, then a dashboard bucket near now, then the ceiling again.
    expect(window.paidGpuMsFrom([100, 150], 200)).toEqual([4 * 20 + 2 * 100, 2 * 50]);
    expect(window.paidGpuMs(180, 200)).toBe(2 * 20);
    // Before, the bucket moved the earliest start held to 180: every later ceiling query went to SQL.
    expect(window.paidGpuMsFrom([100, 150], 200)).toEqual([4 * 20 + 2 * 100, 2 * 50]);
  });
});
