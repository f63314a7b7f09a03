/**
 * The removals' record: what /v1/status reports as the last node boa removed.
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
