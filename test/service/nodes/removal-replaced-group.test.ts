/**
 * A removal boa chose before its node's group was replaced (a run before the restart onto the new group):
 * the node is the group's deletion's to remove (CloudFormation's), not boa's terminate.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { NodeTickInput } from '../../../src/service/nodes/reconciler.ts';
import { reconcilerWorld } from './reconciler-world.ts';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const fn of cleanups.splice(0)) fn();
});

describe('a removal open on a node of a replaced group', () => {
  it('is dropped, never terminated, after the restart onto the new group', async () => {
    const w = reconcilerWorld(cleanups);
    w.release();
    // Busy everywhere: the victim is cordoned and waits for its job to move.
    const cut: NodeTickInput = { ...w.tick(9), gpusInUse: () => 4 };
    w.reconciler.chooseNow(cut);
    w.reconciler.afterTick(cut);
    await w.reconciler.settle();
    const [row] = w.removals.open();
    expect(row?.state).toBe('cordoned');

    const again = w.restart();
    const listed = w.nodes.map((n) =>
      n.id === row?.nodeId ? { ...n, leaving: true, keepOnly: true, replacedGroup: 'gpu' } : n,
    );
    for (let i = 0; i < 2; i++) {
      w.advance(60_000);
      const input = w.tick(9, listed); // the job moved: the node is idle
      again.chooseNow(input);
      again.afterTick(input);
      await again.settle();
    }
    expect(w.terminated).toEqual([]);
    expect(w.removals.open()).toEqual([]);
    expect(w.resizes.every((n) => n <= 10)).toBe(true);
  });
});
