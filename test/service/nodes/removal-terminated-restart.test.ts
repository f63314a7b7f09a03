/**
 * A node boa terminated before a restart that the next listing still has (EKS holds it in
 * Terminating:Wait while it drains, for minutes) is named after the restart with its removal, as before
 * it: it was counted among the nodes being removed but named nowhere (GET /v1/status, GET /v1/nodes).
 */
import { pino } from 'pino';
import { expect, it } from 'vitest';
import { RemovalWalk } from '../../../src/service/nodes/removals.ts';
import { openDb } from '../../../src/store/db.ts';
import { NodeRemovals } from '../../../src/store/node-removals.ts';

const leaving = { id: 'i-2', name: 'n2', launchedAt: 0, gpus: 4, ready: true };
const staying = { id: 'i-1', name: 'n1', launchedAt: 0, gpus: 4, ready: true };

it('names a node terminated before a restart and still listed with its removal, until a listing drops it', () => {
  const removals = new NodeRemovals(openDb(':memory:'));
  const deps = {
    pool: {
      cordon: async () => {},
      uncordon: async () => {},
      terminate: async () => ({ terminated: [], alreadyGone: [] }),
    },
    removals,
    clock: { now: () => 5_000 },
    logger: pino({ level: 'silent' }),
  };
  // The boa before the restart: it chose i-2 for scale-in at 1 s and terminated it at 4 s.
  const row = removals.insert({ nodeId: leaving.id, nodeName: leaving.name, reason: 'scale-in', at: 1_000 });
  removals.advance(row.id, 'terminated', 4_000, { terminatedAt: 4_000, outcome: 'sent' });

  const walk = new RemovalWalk(deps);
  walk.note([staying, leaving]);
  expect(walk.terminated(leaving.id)).toBe(true);
  expect(walk.terminatedRows().map((r) => [r.nodeId, r.nodeName, r.reason, r.state, r.chosenAt])).toEqual([
    [leaving.id, leaving.name, 'scale-in', 'terminated', 1_000],
  ]);
  walk.note([staying]);
  expect(walk.terminatedRows()).toEqual([]);
  expect(walk.includes(leaving.id)).toBe(false);
});
