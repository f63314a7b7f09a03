/**
 * A node pass still running (a slow cordon: throttling's backoff) when the next tick lowers the target
 * and chooses more nodes to remove. The pass sized the group on its own tick's target plus every open
 * removal, the new ones included: it raised the group 9 -> 12 right after the budget dropped, launching
 * three paid nodes the next passes scaled in again (found in review).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { NodeReconciler, type NodeTickInput } from '../../../src/service/nodes/reconciler.ts';
import type { NodeGroupState, NodePool, PoolNode } from '../../../src/service/ports.ts';
import { openStore } from '../../../src/store/db.ts';
import { NodeRemovals } from '../../../src/store/node-removals.ts';
import { Repository } from '../../../src/store/repository.ts';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const fn of cleanups.splice(0)) fn();
});

/** Ten idle nodes of a group whose cordons wait until released; terminations lower its desired size. */
function world() {
  const dir = mkdtempSync(join(tmpdir(), 'boa-pass-race-'));
  const store = openStore(dir);
  cleanups.push(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  let now = 1_800_000_000_000;
  let desired = 10;
  const group = (): NodeGroupState => ({ minSize: 0, maxSize: 20, desiredSize: desired, status: 'ACTIVE' });
  let release!: () => void;
  const cordoned = new Promise<void>((resolve) => (release = resolve));
  const resizes: number[] = [];
  const terminated: string[] = [];
  const pool = {
    describe: async () => group(),
    setDesiredSize: async (n: number) => {
      resizes.push(n);
      desired = n;
      return { requested: n };
    },
    listNodes: async () => [],
    cordon: async () => cordoned,
    uncordon: async () => {},
    terminate: async (ids: readonly string[]) => {
      terminated.push(...ids);
      desired -= ids.length;
      return { terminated: [...ids], alreadyGone: [] };
    },
    protect: async () => {},
  } as unknown as NodePool;
  const nodes: PoolNode[] = Array.from({ length: 10 }, (_, i) => ({
    id: `i-${i}`,
    name: `n${i}`,
    launchedAt: now - 3_600_000 + i,
    gpus: 4,
    ready: true,
  }));
  const reconciler = new NodeReconciler({
    pool,
    removals: new NodeRemovals(store.db),
    repo: new Repository(store.db),
    clock: { now: () => now },
    logger: pino({ level: 'silent' }),
    settings: { provisionMs: 900_000, backoff: { baseMs: 60_000, maxMs: 600_000 } },
  });
  const tick = (target: number): NodeTickInput => ({ target, nodes, group: group(), gpusInUse: () => 0 });
  return {
    reconciler,
    tick,
    resizes,
    terminated,
    release,
    advance: (ms: number) => (now += ms),
    desired: () => desired,
  };
}

describe('a node pass that runs on into the next tick', () => {
  it('sizes the group on the newest target, never raising it after a cut', async () => {
    const w = world();
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
