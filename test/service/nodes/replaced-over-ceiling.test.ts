/**
 * The spend ceiling falling while a replaced group's nodes (paid until CloudFormation deletes the group)
 * are still listed beside the new group's: boa removes new nodes so that both stay within it, since it
 * leaves the old ones to the group's deletion. Before, scale-in compared the new nodes with the target
 * only (during an EKS update of the new group, counted no old node as paid), and the old ones stayed paid
 * on top of the ceiling until they went.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { NodeTickInput } from '../../../src/service/nodes/reconciler.ts';
import { reconcilerWorld } from './reconciler-world.ts';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const fn of cleanups.splice(0)) fn();
});

function world() {
  const w = reconcilerWorld(cleanups);
  w.release();
  const old = new Set(['i-0', 'i-1']);
  // 8 nodes kept in the new group, 2 of the old one: 10 paid against a ceiling of 8.
  const listed = w.nodes.map((n) =>
    old.has(n.id) ? { ...n, leaving: true, keepOnly: true, replacedGroup: 'gpu' } : n,
  );
  const pass = async (gpusInUse: (name: string) => number, status = 'ACTIVE') => {
    w.advance(60_000);
    const tick = w.tick(8, listed);
    const input: NodeTickInput = { ...tick, group: { ...tick.group!, status }, paidCap: 8, gpusInUse };
    w.reconciler.chooseNow(input);
    w.reconciler.afterTick(input);
    await w.reconciler.settle();
  };
  return { w, old, pass };
}

describe('the ceiling falls while a replaced group still has nodes', () => {
  it('removes new nodes so that they and the old ones stay within the ceiling, never an old one', async () => {
    const { w, old, pass } = world();
    await pass(() => 0);
    expect(w.terminated).toHaveLength(2);
    expect(w.terminated.some((id) => old.has(id))).toBe(false);
  });

  it('does not call those removals off while they wait for their jobs to move', async () => {
    const { w, pass } = world();
    await pass(() => 4);
    await pass(() => 4);
    expect(w.removals.open().map((r) => r.state)).toEqual(['cordoned', 'cordoned']);
    expect(w.terminated).toEqual([]);
  });

  it('counts them as paid during an EKS update of the new group too: its over-ceiling removals take new nodes', async () => {
    const { w, old, pass } = world();
    await pass(() => 4, 'UPDATING');
    const chosen = w.removals.open();
    expect(chosen.map((r) => r.reason)).toEqual(['over-ceiling', 'over-ceiling']);
    expect(chosen.some((r) => old.has(r.nodeId))).toBe(false);
  });
});
