/**
 * Over-ceiling removals during an EKS update boa did not send (eks-update.ts), ten busy nodes: a node
 * EKS takes out itself meanwhile, and a budget raised back while boa's removals drain (found in review).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { NodeTickInput } from '../../../src/service/nodes/reconciler.ts';
import type { PoolNode } from '../../../src/service/ports.ts';
import { reconcilerWorld } from './reconciler-world.ts';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const fn of cleanups.splice(0)) fn();
});

function updating(
  w: ReturnType<typeof reconcilerWorld>,
  paidCap: number,
  nodes?: readonly PoolNode[],
  gpusInUse = (_name: string) => 4,
) {
  const input = w.tick(10, nodes);
  return {
    ...input,
    group: { ...input.group!, status: 'UPDATING' },
    gpusInUse,
    paidCap,
  } satisfies NodeTickInput;
}

async function tick(w: ReturnType<typeof reconcilerWorld>, input: NodeTickInput, reconciler = w.reconciler) {
  w.advance(30_000);
  reconciler.chooseNow(input);
  reconciler.afterTick(input);
  await reconciler.settle();
}

describe('over the spend ceiling during an EKS update', () => {
  it('counts a node EKS is terminating under a removal as neither paid nor removed: the excess still goes', async () => {
    // Expected: ceiling 8 -> two removals (draining). EKS then terminates one of them itself
    // (Terminating:Wait, leaving) and the ceiling drops to 7: 9 nodes paid, one being removed, so one
    // more is chosen. Counting the leaving node's removal against the excess chose none: 8 paid for 7.
    const w = reconcilerWorld(cleanups);
    w.release();
    await tick(w, updating(w, 8));
    const first = w.removals.open().map((r) => r.nodeId);
    expect(first).toHaveLength(2);
    const listed = w.nodes.map((n) => (n.id === first[0] ? { ...n, leaving: true } : n));
    await tick(w, updating(w, 7, listed));
    expect(w.removals.open()).toHaveLength(3);
  });

  it('calls the removals off when the budget rises back above the nodes paid, uncordoning their nodes', async () => {
    // Expected: ceiling 8 -> two busy nodes cordoned, their jobs moving. The budget rises to 10 before
    // they empty: both removals are called off and the nodes offered to jobs again. Before: they stayed
    // cordoned, paid and unused, until the update ended.
    const w = reconcilerWorld(cleanups);
    w.release();
    await tick(w, updating(w, 8));
    expect(w.removals.open().map((r) => r.state)).toEqual(['cordoned', 'cordoned']);
    await tick(w, updating(w, 10));
    expect(w.removals.open()).toEqual([]);
    expect(w.reconciler.usable(w.nodes)).toHaveLength(10);
    expect(w.terminated).toEqual([]);
  });

  it("goes on removing the update's old nodes when the budget rises (EKS drains them anyway): terminated once empty", async () => {
    // Before: kept cordoned, never terminated, until the update ended (no removal carried on within
    // the ceiling). Calling them off would uncordon a node EKS may be draining.
    const w = reconcilerWorld(cleanups);
    w.release();
    const old = w.nodes.map((n, i) => (i < 2 ? { ...n, outdated: true } : n));
    await tick(w, updating(w, 8, old));
    expect(w.removals.open().map((r) => r.nodeId)).toEqual(['i-0', 'i-1']);
    await tick(w, updating(w, 10, old));
    expect(w.removals.open().map((r) => r.nodeId)).toEqual(['i-0', 'i-1']);
    await tick(
      w,
      updating(w, 10, old, (name) => (name === 'n0' || name === 'n1' ? 0 : 4)),
    );
    expect(w.terminated).toEqual(['i-0', 'i-1']);
  });

  it('after a restart mid-update, goes on with the stored removals: none chosen twice, no more than the excess', async () => {
    const w = reconcilerWorld(cleanups);
    w.release();
    await tick(w, updating(w, 8));
    const chosen = w.removals.open().map((r) => r.nodeId);
    const boa = w.restart();
    await tick(w, updating(w, 8), boa);
    await tick(w, updating(w, 8), boa);
    expect(w.removals.open().map((r) => r.nodeId)).toEqual(chosen);
    const moved = (name: string) => (name === 'n0' || name === 'n1' ? 0 : 4);
    await tick(w, updating(w, 8, undefined, moved), boa);
    await tick(
      w,
      updating(
        w,
        8,
        w.nodes.filter((n) => !chosen.includes(n.id)),
        moved,
      ),
      boa,
    );
    expect(w.terminated).toEqual(chosen);
    expect(w.removals.open()).toEqual([]);
  });

  it('takes the size an EKS update left as its own after a restart too: no drift', async () => {
    // Expected: boa removes two nodes over the ceiling during the update (desired 10 -> 8); EKS's
    // scale-down phase then leaves 9, and boa restarts before any pass sees the group ACTIVE. Without a
    // restart that size is boa's start (not drift); after one, the in-memory hold was lost and the first
    // pass logged nodes.drift and counted a correction.
    const w = reconcilerWorld(cleanups);
    w.release();
    await tick(w, { ...w.tick(10), gpusInUse: () => 4 });
    await tick(
      w,
      updating(w, 8, undefined, () => 0),
    );
    expect(w.desired()).toBe(8);
    w.setDesired(9);
    const boa = w.restart();
    const left = w.nodes.slice(2);
    await tick(w, { ...w.tick(9, left), gpusInUse: () => 4, paidCap: 9 }, boa);
    expect(boa.counters.driftCorrections).toBe(0);
  });
});

describe('after an EKS update failed (the group ACTIVE again, old nodes left)', () => {
  it('goes on removing the old nodes it chose over the ceiling when the budget rises: never uncordoned', async () => {
    // Expected: ceiling 8 during the update -> the two old-version nodes chosen, cordoned, busy. The
    // update fails (ACTIVE, the two still of the old template: EKS may have left them cordoned) and the
    // budget rises to 10. Calling them off would uncordon a node EKS cordoned, undoing its state while
    // the update's retry replaces the node anyway; they go on, terminated once empty, and boa raises the
    // group for the target with nodes of the new template. Before: both called off and uncordoned.
    const w = reconcilerWorld(cleanups);
    w.release();
    const old = w.nodes.map((n, i) => (i < 2 ? { ...n, outdated: true } : n));
    await tick(w, updating(w, 8, old));
    expect(w.removals.open().map((r) => r.nodeId)).toEqual(['i-0', 'i-1']);
    await tick(w, { ...w.tick(10, old), gpusInUse: () => 4, paidCap: 10 });
    expect(w.removals.open().map((r) => r.nodeId)).toEqual(['i-0', 'i-1']);
    const moved = (name: string) => (name === 'n0' || name === 'n1' ? 0 : 4);
    await tick(w, { ...w.tick(10, old), gpusInUse: moved, paidCap: 10 });
    expect(w.terminated).toEqual(['i-0', 'i-1']);
    await tick(w, { ...w.tick(10, old.slice(2)), gpusInUse: moved, paidCap: 10 });
    expect(w.resizes.at(-1)).toBe(10);
  });

  it('still calls off over-ceiling removals on nodes of the new template when the budget rises', async () => {
    const w = reconcilerWorld(cleanups);
    w.release();
    await tick(w, updating(w, 8));
    expect(w.removals.open()).toHaveLength(2);
    await tick(w, { ...w.tick(10), gpusInUse: () => 4, paidCap: 10 });
    expect(w.removals.open()).toEqual([]);
    expect(w.terminated).toEqual([]);
  });
});

describe('calling over-ceiling removals off while a tick cuts the budget again', () => {
  it('calls off only what the newest budget leaves spare: none chosen again next tick', async () => {
    // Expected: ceiling 7 -> three busy nodes chosen and cordoned. The budget rises to 10: the pass
    // starts calling all three off, its first uncordon slow. Meanwhile a tick cuts the ceiling to 8: two
    // of the three are wanted again, and being open, none is chosen. The pass then calls off one only.
    // Before: it counted the spare once, at 10, and called off all three; the next tick chose two again,
    // cordoning nodes just opened to jobs, and 10 nodes were paid for a ceiling of 8 in between.
    const w = reconcilerWorld(cleanups);
    w.release();
    await tick(w, updating(w, 7));
    expect(w.removals.open()).toHaveLength(3);
    const freeUncordons = w.holdUncordons();
    w.advance(30_000);
    const raised = updating(w, 10);
    w.reconciler.chooseNow(raised);
    w.reconciler.afterTick(raised);
    await new Promise((resolve) => setImmediate(resolve));
    w.advance(30_000);
    const cut = updating(w, 8);
    w.reconciler.chooseNow(cut);
    w.reconciler.afterTick(cut);
    freeUncordons();
    await w.reconciler.settle();
    expect(w.removals.open()).toHaveLength(2);
    const chosen = w.removals.open().map((r) => r.id);
    await tick(w, updating(w, 8));
    expect(w.removals.open().map((r) => r.id)).toEqual(chosen);
  });
});
