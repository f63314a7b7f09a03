/**
 * A node chosen for removal that one listing misses (EC2's eventual consistency) before anything was
 * sent to it. Its removal was recorded as terminated, "already gone": listed again, the node was kept out
 * of use, of the count and of the choice of nodes to remove, paid for good while boa launched another
 * in its place (found in review). Now the removal is closed as never sent, and the node listed again is
 * a node like any other. A removal stored terminating is asked of the pool whether listed or not: its
 * call may never have gone out (a crash, a failed call), and recorded gone on a missed listing alone, the
 * node stayed paid for good (found in review); the pool answers one no longer in the group as gone.
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

  /** A node chosen for removal whose terminate call failed: its removal is left `terminating`. */
  async function failedTermination() {
    const w = reconcilerWorld(cleanups, { failedTerminates: 1 });
    w.release();
    const input = w.tick(9);
    w.reconciler.chooseNow(input);
    w.reconciler.afterTick(input);
    await w.reconciler.settle();
    const [row] = w.removals.open();
    expect(row?.state).toBe('terminating');
    return { w, row };
  }

  it('sends a termination that failed again when a listing then misses its node, and terminates it', async () => {
    const { w, row } = await failedTermination();
    expect(w.terminated).toEqual([]);
    // The next pass's listing misses the node once.
    w.advance(60_000);
    w.reconciler.afterTick(
      w.tick(
        9,
        w.nodes.filter((n) => n.id !== row?.nodeId),
      ),
    );
    await w.reconciler.settle();
    expect(w.terminated).toEqual([row?.nodeId]);
    expect(w.desired()).toBe(9);
    expect(w.removals.open()).toEqual([]);
  });

  it('closes a terminating removal as already gone when the pool says its node has left the group', async () => {
    const { w, row } = await failedTermination();
    // Gone by the time of the next pass (the failed call had gone out after all): no longer in the group.
    const index = w.nodes.findIndex((n) => n.id === row?.nodeId);
    w.nodes.splice(index, 1);
    w.advance(60_000);
    w.reconciler.afterTick(w.tick(9));
    await w.reconciler.settle();
    expect(w.terminated).toEqual([]);
    expect(w.removals.open()).toEqual([]);
  });
});
