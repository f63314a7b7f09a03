/**
 * A node pass still running (a slow cordon: throttling's backoff) when the next tick lowers the target
 * and chooses more nodes to remove. The pass sized the group on its own tick's target plus every open
 * removal, the new ones included: it raised the group 9 -> 12 right after the budget dropped, launching
 * three paid nodes the next passes scaled in again (found in review).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { reconcilerWorld } from './reconciler-world.ts';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const fn of cleanups.splice(0)) fn();
});

describe('a node pass that runs on into the next tick', () => {
  it('sizes the group on the newest target, never raising it after a cut', async () => {
    const w = reconcilerWorld(cleanups);
    const first = w.tick(9);
    w.reconciler.chooseNow(first);
    w.reconciler.afterTick(first);
    await new Promise((resolve) => setImmediate(resolve));
    // 30 s later the budget drops the target to 6: three more nodes chosen; no pass starts (one runs).
    w.advance(30_000);
    const second = w.tick(6);
    w.reconciler.chooseNow(second);
    w.reconciler.afterTick(second);
    w.release();
    await w.reconciler.settle();

    expect(w.terminated).toHaveLength(1);
    expect(w.resizes.filter((n) => n > 9)).toEqual([]);
    expect(w.desired()).toBeLessThanOrEqual(9);
    // The next passes take the group down to the new target.
    for (let i = 0; i < 4 && w.desired() > 6; i++) {
      w.advance(60_000);
      const next = w.tick(6);
      w.reconciler.chooseNow(next);
      w.reconciler.afterTick(next);
      await w.reconciler.settle();
    }
    expect(w.desired()).toBe(6);
    expect(w.resizes.every((n) => n <= 9)).toBe(true);
  });
});

describe('a pass calling removals off while the next tick lowers the target again', () => {
  it('calls off only what the newest target leaves short: none chosen again next tick', async () => {
    // Expected: target 7 -> three busy nodes chosen and cordoned. The target rises to 10: the pass
    // starts calling all three off, its first uncordon slow. Meanwhile a tick lowers the target to 8:
    // two of the three are wanted again, and being open, none is chosen. The pass calls off one only.
    // Before: it counted what was short once, at 10, and called off all three; the next tick chose two
    // again, cordoning nodes just opened to jobs.
    const w = reconcilerWorld(cleanups);
    w.release();
    const busy = { gpusInUse: () => 4 };
    const tick = async (target: number) => {
      w.advance(30_000);
      const input = { ...w.tick(target), ...busy };
      w.reconciler.chooseNow(input);
      w.reconciler.afterTick(input);
      await w.reconciler.settle();
    };
    await tick(7);
    expect(w.removals.open().map((r) => r.state)).toEqual(['cordoned', 'cordoned', 'cordoned']);
    const freeUncordons = w.holdUncordons();
    w.advance(30_000);
    const raised = { ...w.tick(10), ...busy };
    w.reconciler.chooseNow(raised);
    w.reconciler.afterTick(raised);
    await new Promise((resolve) => setImmediate(resolve));
    w.advance(30_000);
    const lowered = { ...w.tick(8), ...busy };
    w.reconciler.chooseNow(lowered);
    w.reconciler.afterTick(lowered);
    freeUncordons();
    await w.reconciler.settle();
    const open = w.removals.open().map((r) => r.id);
    expect(open).toHaveLength(2);
    await tick(8);
    expect(w.removals.open().map((r) => r.id)).toEqual(open);
  });
});
