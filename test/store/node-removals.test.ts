/**
 * The removals' record: what /v1/status reports as the last node boa removed, and which listed nodes
 * boa has terminated already.
 */
import { describe, expect, it } from 'vitest';
import { openDb } from '../../src/store/db.ts';
import { NodeRemovals } from '../../src/store/node-removals.ts';

function terminate(removals: NodeRemovals, nodeId: string, at: number, outcome: 'sent' | 'already-gone') {
  const row = removals.insert({ nodeId, nodeName: `${nodeId}.ec2`, reason: 'scale-in', at: at - 10 });
  removals.advance(row.id, 'terminated', at, { terminatedAt: at, outcome });
}

describe('NodeRemovals.lastTerminated', () => {
  it('is the newest node boa terminated, not one that was already gone', () => {
    const db = openDb(':memory:');
    try {
      const removals = new NodeRemovals(db);
      expect(removals.lastTerminated()).toBeUndefined();
      terminate(removals, 'i-sent', 1000, 'sent');
      terminate(removals, 'i-gone', 2000, 'already-gone');
      expect(removals.lastTerminated()?.nodeId).toBe('i-sent');
      terminate(removals, 'i-later', 3000, 'sent');
      expect(removals.lastTerminated()?.nodeId).toBe('i-later');
    } finally {
      db.$client.close();
    }
  });
});

describe('NodeRemovals.terminatedAmong', () => {
  it('names the given nodes whose removal finished, not those still open, across chunks of ids', () => {
    const db = openDb(':memory:');
    try {
      const removals = new NodeRemovals(db);
      terminate(removals, 'i-sent', 1000, 'sent');
      terminate(removals, 'i-gone', 2000, 'already-gone');
      removals.insert({ nodeId: 'i-open', nodeName: null, reason: 'scale-in', at: 3000 });
      // More ids than one statement takes, with the terminated ones past the first chunk.
      const listed = [...Array.from({ length: 600 }, (_, i) => `i-other-${i}`), 'i-open', 'i-sent', 'i-gone'];
      expect(
        removals
          .terminatedAmong(listed)
          .map((r) => r.nodeId)
          .sort(),
      ).toEqual(['i-gone', 'i-sent']);
      expect(removals.terminatedAmong(['i-open'])).toEqual([]);
      expect(removals.terminatedAmong([])).toEqual([]);
    } finally {
      db.$client.close();
    }
  });
});
