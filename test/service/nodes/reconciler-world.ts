/**
 * A NodeReconciler over a real store and a fake pool of ten idle nodes whose cordons wait until
 * released and whose terminations lower the group's desired size (the first `failedTerminates` fail):
 * for races between a pass and ticks.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { NodeReconciler, type NodeTickInput } from '../../../src/service/nodes/reconciler.ts';
import type { NodeGroupState, NodePool, PoolNode } from '../../../src/service/ports.ts';
import { openStore } from '../../../src/store/db.ts';
import { NodeRemovals } from '../../../src/store/node-removals.ts';
import { Repository } from '../../../src/store/repository.ts';

export function reconcilerWorld(
  cleanups: Array<() => void>,
  options: { failedTerminates?: number; gpusPerNode?: number } = {},
) {
  let failedTerminates = options.failedTerminates ?? 0;
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
  /** While set, uncordons wait for it (holdUncordons): a pass calling removals off runs into a tick. */
  let uncordonsHeld: Promise<void> | undefined;
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
    uncordon: async () => {
      await uncordonsHeld;
    },
    terminate: async (ids: readonly string[]) => {
      if (failedTerminates > 0) {
        failedTerminates -= 1;
        throw new Error('Throttling: Rate exceeded');
      }
      // As both pools answer: a node no longer in the group is already gone, nothing sent.
      const gone = ids.filter((id) => !nodes.some((n) => n.id === id));
      if (gone.length > 0) return { terminated: [], alreadyGone: gone };
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
  const removals = new NodeRemovals(store.db);
  // A new reconciler over the same store and pool: boa restarted.
  const start = () =>
    new NodeReconciler({
      pool,
      removals: new NodeRemovals(store.db),
      repo: new Repository(store.db),
      clock: { now: () => now },
      logger: pino({ level: 'silent' }),
      settings: {
        provisionMs: 900_000,
        backoff: { baseMs: 60_000, maxMs: 600_000 },
        // The configured GPUs of a node (the nodes here have 4): each counts as its share of the cap.
        ...(options.gpusPerNode !== undefined ? { gpusPerNode: options.gpusPerNode } : {}),
      },
    });
  const reconciler = start();
  const tick = (target: number, listed: readonly PoolNode[] = nodes): NodeTickInput => ({
    target,
    nodes: listed,
    group: group(),
    gpusInUse: () => 0,
  });
  return {
    reconciler,
    restart: start,
    removals,
    nodes,
    tick,
    resizes,
    terminated,
    release,
    /** Uncordons wait from now until the function returned is called. */
    holdUncordons: () => {
      let free!: () => void;
      uncordonsHeld = new Promise<void>((resolve) => (free = resolve));
      return () => {
        uncordonsHeld = undefined;
        free();
      };
    },
    advance: (ms: number) => (now += ms),
    desired: () => desired,
    /** The desired size set outside boa (EKS's own update). */
    setDesired: (n: number) => (desired = n),
  };
}
