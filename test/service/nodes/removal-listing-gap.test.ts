/**
 * A node chosen for removal that one listing misses (EC2's eventual consistency) before anything was
 * sent to it. Its removal was recorded as terminated, "already gone": listed again, the node was kept out
 * of use, of the count and of the choice of nodes to remove, paid for good while boa launched another
 * in its place (found in review). Now the removal is closed as never sent, and the node listed again is
 * a node like any other. A removal whose termination was stored as sent stays terminated.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { reconcilerWorld } from './reconciler-world.ts';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const fn of cleanups.splice(0)) fn();
});

describe('a node chosen for removal that one listing misses', () => {
  it('is used again when listed again, and removed like any other once not needed', async () => {
    const w = reconcilerWorld(cleanups);
    w.release();
    const chosen = w.tick(9);
    w.reconciler.chooseNow(chosen);
    const [victim] = w.removals.open().map((r) => r.nodeId);
    const victimName = w.nodes.find((n) => n.id === victim)?.name;
    expect(victimName).toBeDefined();
    // The pass's listing misses the victim once.
    w.reconciler.afterTick(
      w.tick(
        9,
        w.nodes.filter((n) => n.id !== victim),
      ),
    );
    await w.reconciler.settle();
    expect(w.terminated).toEqual([]);

    // Listed again, and the load wants all ten: it is used, and the group is not raised past ten.
    for (let i = 0; i < 3; i++) {
      w.advance(60_000);
      const input = w.tick(10);
      w.reconciler.chooseNow(input);
      // Placement's ids are the nodes' names.
      expect(w.reconciler.usable(input.nodes, () => new Map()).map((n) => n.id)).toContain(victimName);
      w.reconciler.afterTick(input);
      await w.reconciler.settle();
    }
    expect(w.resizes.every((n) => n <= 10)).toBe(true);
    // Then the target falls to 9: one node is removed, and terminated.
    w.advance(60_000);
    const cut = w.tick(9);
    w.reconciler.chooseNow(cut);
    w.reconciler.afterTick(cut);
    await w.reconciler.settle();
    expect(w.terminated).toHaveLength(1);
    expect(w.desired()).toBe(9);
  });
});
