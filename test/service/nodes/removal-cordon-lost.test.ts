/**
 * A cordon that went through but whose answer was lost (a timeout after the API server applied it, or
 * boa killed in between) is undone when the removal is called off: the removal is stored `cordoning`
 * before the call. Before, it stayed `chosen`, the call-off skipped the uncordon, and the node boa kept
 * ran nothing until it was removed as never ready (found in review).
 */
import { pino } from 'pino';
import { expect, it } from 'vitest';
import { RemovalWalk } from '../../../src/service/nodes/removals.ts';
import { openDb } from '../../../src/store/db.ts';
import { NodeRemovals } from '../../../src/store/node-removals.ts';

const node = { id: 'i-1', name: 'n1', launchedAt: 0, gpus: 4, ready: true };

function world() {
  const cordoned = new Set<string>();
  let answer: 'lost' | 'ok' = 'lost';
  const pool = {
    cordon: async (ids: readonly string[]) => {
      for (const id of ids) cordoned.add(id);
      if (answer === 'lost') throw Object.assign(new Error('request timed out'), { code: 504 });
    },
    uncordon: async (ids: readonly string[]) => {
      for (const id of ids) cordoned.delete(id);
    },
    terminate: async () => ({ terminated: [], alreadyGone: [] }),
  };
  const removals = new NodeRemovals(openDb(':memory:'));
  const walk = () =>
    new RemovalWalk({ pool, removals, clock: { now: () => 1_000 }, logger: pino({ level: 'silent' }) });
  /** A walk that chose `node` and sent its cordon, whose answer was lost. */
  const cordonLost = async () => {
    const lost = walk();
    lost.note([node]);
    lost.choose(node, 'scale-in', 1_000);
    await lost.carryOn(
      [node],
      () => 0,
      () => undefined,
    );
    return lost;
  };
  return { cordoned, walk, cordonLost, removals, answered: () => (answer = 'ok') };
}

it('uncordons a node whose cordon applied but whose answer was lost when its removal is called off', async () => {
  const w = world();
  const walk = await w.cordonLost();
  const row = walk.rows()[0]!;
  expect(row.state).toBe('cordoning');
  expect(await walk.cancel(row)).toBe(true);
  expect(w.cordoned.has(node.id)).toBe(false);
  expect(w.removals.all().map((r) => r.state)).toEqual(['cancelled']);
});

it('does the same after a restart in between: the stored removal says a cordon may have applied', async () => {
  const w = world();
  await w.cordonLost();
  const after = w.walk();
  after.note([node]);
  const row = after.rows()[0]!;
  expect(await after.cancel(row)).toBe(true);
  expect(w.cordoned.has(node.id)).toBe(false);
});

it('carries a removal left cordoning on: the cordon is sent again, then the node goes once empty', async () => {
  const w = world();
  const walk = await w.cordonLost();
  w.answered();
  expect(
    await walk.carryOn(
      [node],
      () => 0,
      () => undefined,
    ),
  ).toBe(0);
  expect(w.removals.all().map((r) => r.state)).toEqual(['terminated']);
  expect(w.cordoned.has(node.id)).toBe(true);
});
