/**
 * An EKS update (its surge) over a node group whose instances have other GPUs than BOA_INSTANCE_TYPE's:
 * the update hold counts each node at its own GPUs, as the ledger and the spend ceiling's cap do. Found in
 * review: it counted the group's own nodes as one each, so a 4-GPU surge node beside two 4-GPU nodes
 * read as 3 of a 1-GPU ceiling of 8, and boa held off while 12 GPUs were paid against a budget of 8.
 * Removals are called off in the same units: a node only when its GPUs fit in what the ceiling leaves.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { NodeTickInput } from '../../../src/service/nodes/reconciler.ts';
import { type NodesWorld, nodesWorld, type NodesWorldOptions, TICK_SECONDS } from '../nodes-harness.ts';
import { reconcilerWorld } from './reconciler-world.ts';

const worlds: NodesWorld[] = [];
const cleanups: Array<() => void> = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.cleanup();
  for (const fn of cleanups.splice(0)) fn();
});

function world(options: NodesWorldOptions): NodesWorld {
  const w = nodesWorld({ idleFill: false, sleep: async () => undefined, ...options });
  worlds.push(w);
  return w;
}

const BOOT_MS = 60_000; // nodes-harness's EC2 pending time

/** EC2's bill in GPU-hours for [from, to]: instances running in it, at `gpus` each. */
function billedGpuHours(w: NodesWorld, gpus: number, from: number, to: number): number {
  let ms = 0;
  for (const i of w.group.asg.instances) {
    const stopped = i.terminatedAt === undefined ? to : (i.hookUntil ?? i.terminatedAt);
    ms += Math.max(0, Math.min(stopped, to) - Math.max(i.launchedAt + BOOT_MS, from));
  }
  return (ms * gpus) / 3_600_000;
}

describe('an EKS update over 4-GPU instances, boa configured with 1-GPU ones', () => {
  it('removes the surge beyond the budget at its 4 GPUs a node: the GPUs paid come within the ceiling', async () => {
    // Expected: two 4-GPU nodes, two jobs of 4 GPUs, budget 8 (a ceiling of 8 1-GPU nodes). EKS starts
    // an update and surges one more 4-GPU node: 12 GPUs paid. boa removes one node (an old one first),
    // so 8 GPUs are paid through the update. Before: 3 nodes counted as 3 of the 8 allowed, nothing
    // removed until the ledger's debt cut the ceiling to 2.
    const w = world({
      instanceType: 'g4dn.12xlarge',
      configuredType: 'g4dn.xlarge',
      desiredSize: 2,
      maxSize: 4,
    });
    const { boa, tick, job } = await w.start();
    boa.service.setBudget(8);
    job(4);
    job(4);
    await tick(10);
    expect(w.group.asg.live()).toHaveLength(2);
    w.group.startVersionUpdate(1);
    const start = w.clock.now();
    await tick(3); // the surge boots (60 s), is listed, and boa chooses
    const ceilingGpus = () => boa.service.spendCeiling(w.clock.now())?.gpus ?? Infinity;
    const paidGpus = async () =>
      (await boa.pool.listNodes())
        .filter((n) => !n.leaving && n.billed !== false)
        .reduce((sum, n) => sum + n.gpus, 0);
    const over: number[] = [];
    for (let k = 0; k < 27; k++) {
      await tick(1);
      over.push(Math.max(0, (await paidGpus()) - ceilingGpus()));
    }
    const hours = (w.clock.now() - start) / 3_600_000;
    const billed = billedGpuHours(w, 4, start, w.clock.now());
    expect(over).toEqual(over.map(() => 0));
    // Within the budget and a boot's worth of the surge node (4 GPUs for 3 ticks).
    expect(billed).toBeLessThanOrEqual(8 * hours + (4 * 3 * TICK_SECONDS) / 3600);
    expect(w.logs.events()).toContain('nodes.update-over-ceiling');
    expect(w.group.terminations.every((t) => t.decrement)).toBe(true);
    expect(w.group.finishVersionUpdate()).toBe('Successful');
    await tick(2);
    expect(w.group.group.desiredSize).toBeGreaterThanOrEqual(w.group.group.minSize);
    expect(w.group.asg.live().length * 4).toBeLessThanOrEqual(8);
  });
});

describe('calling over-ceiling removals off during an update, 4-GPU nodes under a 1-GPU configuration', () => {
  it("calls one off only when its node's 4 GPUs fit in what the raised budget leaves", async () => {
    // Expected: ten busy 4-GPU nodes (40 GPUs), a ceiling of 32: two chosen and cordoned (8 GPUs). The
    // ceiling rises to 34: 2 GPUs spare, less than a node, so both stay (one called off would pay 36
    // for 34, and the next tick chose a node again). At 36 one is called off. Before: the spare of 2
    // called one off.
    const w = reconcilerWorld(cleanups, { gpusPerNode: 1 });
    w.release();
    const updating = (paidCap: number): NodeTickInput => {
      const input = w.tick(10);
      return { ...input, group: { ...input.group!, status: 'UPDATING' }, gpusInUse: () => 4, paidCap };
    };
    const tick = async (input: NodeTickInput) => {
      w.advance(30_000);
      w.reconciler.chooseNow(input);
      w.reconciler.afterTick(input);
      await w.reconciler.settle();
    };
    await tick(updating(32));
    const chosen = w.removals.open().map((r) => r.id);
    expect(chosen).toHaveLength(2);
    await tick(updating(34));
    expect(w.removals.open().map((r) => r.id)).toEqual(chosen);
    await tick(updating(36));
    expect(w.removals.open()).toHaveLength(1);
    expect(w.terminated).toEqual([]);
  });
});
