/**
 * Over-ceiling removals during an EKS update boa did not send (eks-update.ts), ten busy nodes: a node
 * EKS takes out itself meanwhile (found in review).
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

async function tick(w: ReturnType<typeof reconcilerWorld>, input: NodeTickInput) {
  w.advance(30_000);
  w.reconciler.chooseNow(input);
  w.reconciler.afterTick(input);
  await w.reconciler.settle();
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
});
