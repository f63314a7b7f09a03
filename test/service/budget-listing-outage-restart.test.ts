/**
 * A restart of boa in a listing outage that followed a raise: while the pool's listing fails, the
 * spend ceiling counts the group's desired size beyond the listing the ledger last stored as paid
 * (service/unlisted-paid.ts). That count was kept in memory only: a boa restarted in the outage read
 * the window as unspent, though the group had paid for its raised size all along.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { paidGpusNow } from '../../src/service/paid-now.ts';
import type { NodePool, PoolNode } from '../../src/service/ports.ts';
import {
  FLAP_GUARD,
  GPUS_PER_NODE,
  HOUR,
  scaledWindowService,
  WINDOW_CAP,
  WINDOW_HOURS,
} from './scaled-window.ts';

const TICKS = 800;
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * The group's launches as the test saw them each tick, given to boa as an Auto Scaling group's
 * activities are on EKS (NodePool.launchedSince, which the local pool lacks): the ledger then charges
 * the nodes launched and gone while the listing failed, so its paid is what the pool ran.
 */
class GroupHistory {
  private readonly seen = new Map<string, { launchedAt: number; goneAt?: number }>();

  observe(nodes: readonly PoolNode[], now: number): void {
    const ids = new Set(nodes.map((n) => n.id));
    for (const node of nodes)
      if (!this.seen.has(node.id)) this.seen.set(node.id, { launchedAt: node.launchedAt });
    for (const [id, node] of this.seen) if (!ids.has(id) && node.goneAt === undefined) node.goneAt = now;
  }

  attach(pool: NodePool): void {
    pool.launchedSince = async (since: number) => {
      const launched = [...this.seen]
        .filter(([, n]) => n.launchedAt >= since)
        .map(([id, n]) => ({ id, ...n }));
      const gone = new Map<string, number>();
      for (const [id, n] of this.seen)
        if (n.goneAt !== undefined && n.goneAt >= since) gone.set(id, n.goneAt);
      return { launched, gone };
    };
  }
}

/**
 * The pool's listing failing until `restore` is called (the Kubernetes API down: the group's own API
 * answers, so boa can read the size it lowers).
 */
function failListing(pool: NodePool) {
  const listNodes = pool.listNodes.bind(pool);
  pool.listNodes = async () => {
    throw new Error('the server was unable to return a response in the time allotted');
  };
  return {
    listNodes,
    restore() {
      pool.listNodes = listNodes;
    },
  };
}

/**
 * 800 ticks, the listing failing over [failFrom, failTo), boa restarted at `restartAt` (down `downMs`),
 * `bursts` jobs registered at the ticks given: the heaviest window paid, as the pool really ran its
 * nodes (the ledger never sees a node launched and gone while the local pool's listing fails), and the
 * most GPUs paid that the ledger held no row for.
 */
async function run(
  failFrom: number,
  failTo: number,
  restartAt: number,
  downMs: number,
  bursts: ReadonlyMap<number, number>,
) {
  const dataDir = mkdtempSync(join(tmpdir(), 'boa-outage-restart-'));
  dirs.push(dataDir);
  const window = await scaledWindowService('listing-outage-restart-0123456789', 3, dataDir);
  const history = new GroupHistory();
  history.attach(window.service.deps.pool);
  let failing: ReturnType<typeof failListing> | undefined;
  // GPUs the pool paid at each tick, in ticks of 1 s; the time boa was down at the size it had.
  const paid: number[] = [];
  const windowTicks = (WINDOW_HOURS * HOUR) / 1000;
  try {
    let mostUnlisted = 0;
    for (let tick = 0; tick < TICKS; tick++) {
      if (tick === restartAt) {
        failing?.restore();
        const before = paid[paid.length - 1] ?? 0;
        for (let s = 0; s < downMs / 1000; s++) paid.push(before);
        await window.restart(downMs);
        history.attach(window.service.deps.pool);
        failing = failListing(window.service.deps.pool);
      }
      window.register(bursts.get(tick) ?? 0, 'o');
      if (tick === failFrom) failing = failListing(window.service.deps.pool);
      if (tick === failTo) {
        failing?.restore();
        failing = undefined;
      }
      await window.tick();
      const nodes = await (
        failing?.listNodes ?? window.service.deps.pool.listNodes.bind(window.service.deps.pool)
      )();
      paid.push(paidGpusNow(nodes));
      history.observe(nodes, window.now());
      if (failing !== undefined)
        mostUnlisted = Math.max(
          mostUnlisted,
          paidGpusNow(nodes) - window.service.deps.repo.ledger.openNodeGpus(),
        );
    }
    let heaviest = 0;
    for (let end = windowTicks; end <= paid.length; end++) {
      const sum = paid.slice(end - windowTicks, end).reduce((a, b) => a + b, 0);
      heaviest = Math.max(heaviest, sum / 3600);
    }
    return { heaviest, mostUnlisted };
  } finally {
    failing?.restore();
    await window.boa.close();
  }
}

describe('a restart of boa while the node listing fails after a raise', () => {
  const bursts = new Map([
    [5, 50],
    [210, 200],
  ]);

  it('pays at most budget x (window + slack x horizon) in any window, the unlisted nodes counted', async () => {
    const { heaviest, mostUnlisted } = await run(200, 400, 230, 0, bursts);
    // The case at hand: the group grew beyond the last listing during the outage, before the restart.
    expect(mostUnlisted).toBeGreaterThanOrEqual(8 * GPUS_PER_NODE);
    expect(heaviest).toBeLessThanOrEqual(WINDOW_CAP + FLAP_GUARD);
  }, 240_000);

  it('counts the time boa was down at the size it had asked for', async () => {
    const { heaviest, mostUnlisted } = await run(200, 400, 215, 40_000, bursts);
    expect(mostUnlisted).toBeGreaterThanOrEqual(8 * GPUS_PER_NODE);
    expect(heaviest).toBeLessThanOrEqual(WINDOW_CAP + FLAP_GUARD);
  }, 240_000);
});
