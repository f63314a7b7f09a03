/**
 * The end of a gone node's ledger row (service/gone-nodes.ts), and the store ending it there: the
 * termination's end when the group said it, bounded by what boa saw and EC2's minimum; the in-memory paid
 * sum and the SQL over the rows agreeing after a row ended before the tick that saw it gone.
 */
import { describe, expect, it } from 'vitest';
import { goneAtOf, MIN_BILLED_MS } from '../../src/service/gone-nodes.ts';
import { openDb } from '../../src/store/db.ts';
import { Repository } from '../../src/store/repository.ts';

const node = { id: 'i-1', launchedAt: 1_000_000 };

describe('when a gone node stopped being paid', () => {
  it('is when its termination ended, when the group said', () => {
    expect(goneAtOf(new Map([['i-1', 1_500_000]]), 1_200_000, 2_000_000)(node)).toBe(1_500_000);
  });

  it('is the tick that saw it gone when the group did not say (the local pool, a termination under way)', () => {
    expect(goneAtOf(new Map(), 1_200_000, 2_000_000)(node)).toBe(2_000_000);
    expect(goneAtOf(new Map([['i-2', 1_500_000]]), 1_200_000, 2_000_000)(node)).toBe(2_000_000);
  });

  it('is never before the listing that last showed it running (AWS clock behind boa), nor after now', () => {
    expect(goneAtOf(new Map([['i-1', 1_100_000]]), 1_200_000, 2_000_000)(node)).toBe(1_200_000);
    expect(goneAtOf(new Map([['i-1', 2_500_000]]), 1_200_000, 2_000_000)(node)).toBe(2_000_000);
  });

  // After a restart the service's last listing is the last tick before it (scheduler.ts), which may be
  // long after the real one (the listings failed, then kill -9): the node's own, from its row, wins.
  it("is bounded by the last listing the ledger stored when it has one, not the service's", () => {
    const listedAtNode = { ...node, lastListedAt: 1_100_000 };
    expect(goneAtOf(new Map([['i-1', 1_050_000]]), 1_400_000, 2_000_000)(listedAtNode)).toBe(1_100_000);
  });

  it("is never before EC2's minimum from its launch", () => {
    const gone = goneAtOf(new Map([['i-1', node.launchedAt + 10_000]]), 0, 2_000_000);
    expect(gone(node)).toBe(node.launchedAt + MIN_BILLED_MS);
  });
});

describe("the store ending a gone node's row before the tick that saw it", () => {
  it('ends it there, never after the tick, and the in-memory paid sum agrees with the SQL', () => {
    const db = openDb(':memory:');
    try {
      const repo = new Repository(db);
      const nodes = [
        { id: 'a', gpus: 4, launchedAt: 0 },
        { id: 'b', gpus: 4, launchedAt: 0 },
      ];
      repo.transaction(() => repo.ledger.observeNodes(nodes, 60_000));
      // The paid sum held in memory from here on (the spend ceiling's query).
      expect(repo.ledger.paidGpuMsFrom([0], 600_000)).toEqual([2 * 4 * 600_000]);
      // 'a' terminated at 300 s, seen gone at 900 s; 'b' said to end after the tick: ended at it.
      const ended = new Map([
        ['a', 300_000],
        ['b', 1_000_000],
      ]);
      repo.transaction(() => repo.ledger.observeNodes([], 900_000, (span) => ended.get(span.id)!));
      const rows = db.$client.prepare('select id, gone_at as goneAt from ledger_nodes order by id').all();
      expect(rows).toEqual([
        { id: 'a', goneAt: 300_000 },
        { id: 'b', goneAt: 900_000 },
      ]);
      const expected = 4 * 300_000 + 4 * 900_000;
      expect(repo.ledger.paidGpuMsFrom([0], 1_200_000)).toEqual([expected]);
      // The SQL over the rows (a new repository has no sum in memory).
      expect(new Repository(db).ledger.paidGpuMs(0, 1_200_000)).toBe(expected);
      expect(repo.ledger.openNodeGpus()).toBe(0);
    } finally {
      db.$client.close();
    }
  });

  it('bounds it by the last listing that showed it, as the ledger stored it: a restart keeps that', () => {
    const db = openDb(':memory:');
    try {
      const repo = new Repository(db);
      const a = { id: 'a', gpus: 4, launchedAt: 0 };
      repo.transaction(() => repo.ledger.observeNodes([a], 60_000));
      repo.transaction(() => repo.ledger.observeNodes([a], 120_000));
      // A restart (a new repository), the listings having failed for 10 minutes before it: the last
      // tick (720 s) is what the scheduler takes for the last listing; the ledger stored 120 s.
      const seen: Array<number | undefined> = [];
      const restarted = new Repository(db);
      restarted.transaction(() =>
        restarted.ledger.observeNodes([], 780_000, (span) => {
          seen.push(span.lastListedAt);
          return goneAtOf(new Map([['a', 90_000]]), 720_000, 780_000)(span);
        }),
      );
      expect(seen).toEqual([120_000]);
      const goneAt = db.$client.prepare('select gone_at from ledger_nodes where id = ?').pluck();
      expect(goneAt.get('a')).toBe(120_000);
    } finally {
      db.$client.close();
    }
  });
});
