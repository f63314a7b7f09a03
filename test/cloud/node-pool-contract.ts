import { describe, expect, it } from 'vitest';
import type { NodePool } from '../../src/service/ports.ts';

export interface PoolHarness {
  readonly pool: NodePool;
  /** Moves the pool's clock (boot and release happen with time). */
  advance(ms: number): void;
  now(): number;
  /** Resizes the pool really made (changes of state, or update requests to the cloud). */
  resizes(): number;
}

export interface ContractOptions {
  /** A pool over a group with these bounds, at desiredSize = minSize, gpusPerNode = GPUS. */
  readonly make: (bounds: { minSize: number; maxSize: number }) => PoolHarness;
  /** Time after which new nodes are ready and released nodes gone. */
  readonly settleMs: number;
}

export const GPUS = 4;

/** The NodePool port's contract, run against every implementation. */
export function nodePoolContract(name: string, { make, settleMs }: ContractOptions): void {
  describe(`NodePool contract: ${name}`, () => {
    const bounds = { minSize: 1, maxSize: 5 };

    it('describes its bounds and starts with minSize nodes', async () => {
      const h = make(bounds);
      expect(await h.pool.describe()).toMatchObject({ minSize: 1, maxSize: 5, desiredSize: 1 });
      h.advance(settleMs);
      const nodes = await h.pool.listNodes();
      expect(nodes).toHaveLength(1);
      expect(nodes[0]).toMatchObject({ gpus: GPUS, ready: true });
    });

    it('scales up: new nodes are listed at once, launched now, ready only after booting', async () => {
      const h = make(bounds);
      h.advance(settleMs);
      const before = h.now();
      const old = (await h.pool.listNodes()).map((n) => n.id);
      expect(await h.pool.setDesiredSize(4)).toMatchObject({ requested: 4 });
      const after = h.now();
      expect((await h.pool.describe()).desiredSize).toBe(4);
      const nodes = await h.pool.listNodes();
      expect(nodes).toHaveLength(4);
      const fresh = nodes.filter((n) => !old.includes(n.id));
      expect(fresh).toHaveLength(3);
      for (const n of fresh) {
        expect(n.launchedAt).toBeGreaterThanOrEqual(before);
        expect(n.launchedAt).toBeLessThanOrEqual(after);
        expect(n.ready).toBe(false);
      }
      h.advance(settleMs);
      expect((await h.pool.listNodes()).every((n) => n.ready)).toBe(true);
      expect(new Set(nodes.map((n) => n.id)).size).toBe(4);
    });

    it('scales down: the nodes beyond the desired count go, the others stay', async () => {
      const h = make(bounds);
      await h.pool.setDesiredSize(4);
      h.advance(settleMs);
      const four = (await h.pool.listNodes()).map((n) => n.id);
      expect(await h.pool.setDesiredSize(2)).toMatchObject({ requested: 2 });
      expect((await h.pool.describe()).desiredSize).toBe(2);
      // Never fewer than desired while the others are released.
      expect((await h.pool.listNodes()).filter((n) => n.ready).length).toBeGreaterThanOrEqual(2);
      h.advance(settleMs);
      const two = await h.pool.listNodes();
      expect(two).toHaveLength(2);
      expect(two.every((n) => four.includes(n.id) && n.ready)).toBe(true);
    });

    it('clamps to the bounds: never above maxSize, never below minSize', async () => {
      const h = make(bounds);
      expect(await h.pool.setDesiredSize(99)).toMatchObject({ requested: 5 });
      expect((await h.pool.describe()).desiredSize).toBe(5);
      expect(await h.pool.listNodes()).toHaveLength(5);
      expect(await h.pool.setDesiredSize(-3)).toMatchObject({ requested: 1 });
      expect((await h.pool.describe()).desiredSize).toBe(1);
      h.advance(settleMs);
      expect(await h.pool.listNodes()).toHaveLength(1);
    });

    it('is idempotent: the same target again changes nothing and makes no second resize', async () => {
      const h = make(bounds);
      await h.pool.setDesiredSize(3);
      const resizes = h.resizes();
      const nodes = await h.pool.listNodes();
      expect(await h.pool.setDesiredSize(3)).toMatchObject({ requested: 3 });
      expect(await h.pool.setDesiredSize(7)).toMatchObject({ requested: 5 });
      expect(await h.pool.setDesiredSize(8)).toMatchObject({ requested: 5 });
      expect(h.resizes()).toBe(resizes + 1);
      expect((await h.pool.listNodes()).slice(0, 3)).toEqual(nodes);
    });

    it('terminates exactly the chosen nodes, lowering the desired size by as many; a repeat changes nothing', async () => {
      const h = make(bounds);
      await h.pool.setDesiredSize(4);
      h.advance(settleMs);
      const four = (await h.pool.listNodes()).map((n) => n.id);
      // The second oldest: neither the node a newest-first nor an oldest-first policy would pick.
      const chosen = four[1] as string;
      expect(await h.pool.terminate([chosen])).toEqual({ terminated: [chosen], alreadyGone: [] });
      expect((await h.pool.describe()).desiredSize).toBe(3);
      h.advance(settleMs);
      const left = (await h.pool.listNodes()).map((n) => n.id);
      expect(left).toEqual(four.filter((id) => id !== chosen));
      expect(await h.pool.terminate([chosen])).toEqual({ terminated: [], alreadyGone: [chosen] });
      expect((await h.pool.describe()).desiredSize).toBe(3);
      h.advance(settleMs);
      expect((await h.pool.listNodes()).map((n) => n.id)).toEqual(left);
    });

    it('terminates a node at the group minimum without lowering the size: replaced, and a new one comes', async () => {
      const h = make(bounds);
      h.advance(settleMs);
      const [only] = (await h.pool.listNodes()).map((n) => n.id);
      expect(await h.pool.terminate([only as string])).toEqual({
        terminated: [],
        replaced: [only],
        alreadyGone: [],
      });
      expect((await h.pool.describe()).desiredSize).toBe(1);
      h.advance(settleMs);
      const after = await h.pool.listNodes();
      expect(after.map((n) => n.id)).not.toContain(only);
      expect(after).toHaveLength(1);
    });

    it('cordons: a cordoned node is listed, not ready for jobs, and says why', async () => {
      const h = make(bounds);
      await h.pool.setDesiredSize(2);
      h.advance(settleMs);
      const [a, b] = await h.pool.listNodes();
      await h.pool.cordon([a?.id as string]);
      await h.pool.cordon([a?.id as string]);
      const nodes = await h.pool.listNodes();
      expect(nodes.find((n) => n.id === a?.id)).toMatchObject({
        ready: false,
        cordoned: true,
        waitingFor: 'cordoned',
      });
      expect(nodes.find((n) => n.id === b?.id)).toMatchObject({ ready: true });
      // A removal called off: open to jobs again, twice as harmless as once.
      await h.pool.uncordon([a?.id as string]);
      await h.pool.uncordon([a?.id as string]);
      const reopened = (await h.pool.listNodes()).find((n) => n.id === a?.id);
      expect(reopened).toMatchObject({ ready: true });
      expect(reopened?.cordoned ?? false).toBe(false);
    });

    it('protected nodes stay when the desired size is lowered; others go', async () => {
      const h = make(bounds);
      await h.pool.setDesiredSize(3);
      h.advance(settleMs);
      const three = (await h.pool.listNodes()).map((n) => n.id);
      const kept = [three[1], three[2]] as string[];
      await h.pool.protect(kept, true);
      await h.pool.setDesiredSize(1);
      h.advance(settleMs);
      expect((await h.pool.listNodes()).map((n) => n.id)).toEqual(kept);
    });

    it('refuses a target that is not a whole number, changing nothing', async () => {
      const h = make(bounds);
      for (const bad of [2.5, Number.NaN, Number.POSITIVE_INFINITY]) {
        await expect(h.pool.setDesiredSize(bad)).rejects.toThrow(/whole number/);
      }
      expect((await h.pool.describe()).desiredSize).toBe(1);
      expect(h.resizes()).toBe(0);
    });
  });
}
