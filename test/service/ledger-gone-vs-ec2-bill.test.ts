import { afterEach, describe, expect, it } from 'vitest';
import type Database from 'better-sqlite3';
import type { EmulatedInstance } from '../cloud/emulated-asg.ts';
import type { NodePool } from '../../src/service/ports.ts';
import { type NodesWorld, nodesWorld, type NodesWorldOptions, TICK_SECONDS } from './nodes-harness.ts';

/**
 * A gone node's ledger row against EC2's bill (as ledger-vs-ec2-bill.test.ts: running until
 * shutting-down, the emulated group the bill's source): never below it, and over by at most one tick at
 * its end, however long after its termination boa next listed the group (service/gone-nodes.ts). Before,
 * the row ended at the tick that saw it gone: a stop of boa, or of its listings, was charged in full.
 */
const worlds: NodesWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.cleanup();
});

const BOOT_MS = 60_000; // nodes-harness's EC2 pending time, which the ledger counts from launch
const TICK_MS = TICK_SECONDS * 1000;
const MINUTE = 60_000;

function world(options?: NodesWorldOptions): NodesWorld {
  const w = nodesWorld(options);
  worlds.push(w);
  return w;
}

/** When EC2 stopped billing a terminated instance: its lifecycle hook's end, else its termination. */
const billedUntil = (i: EmulatedInstance) => i.hookUntil ?? (i.terminatedAt as number);

/**
 * The gone instance's row against its bill: paid (GPU-ms) not below billed, and over it by no more than
 * its pending time at the start and one tick at the end.
 */
function rowAgainstBill(boa: { db: { $client: Database.Database } }, i: EmulatedInstance) {
  const row = boa.db.$client
    .prepare('select gpus, launched_at as launchedAt, gone_at as goneAt from ledger_nodes where id = ?')
    .get(i.id) as { gpus: number; launchedAt: number; goneAt: number | null };
  expect(row.goneAt).not.toBeNull();
  const paid = row.gpus * (row.goneAt! - row.launchedAt);
  const billed = row.gpus * Math.max(MINUTE, billedUntil(i) - (i.launchedAt + BOOT_MS));
  return { paid, billed, endOver: row.goneAt! - billedUntil(i), gpus: row.gpus };
}

function expectWithinOneTick(r: ReturnType<typeof rowAgainstBill>) {
  expect(r.paid).toBeGreaterThanOrEqual(r.billed);
  expect(r.endOver).toBeGreaterThanOrEqual(0);
  expect(r.endOver).toBeLessThanOrEqual(TICK_MS);
  expect(r.paid - r.billed).toBeLessThanOrEqual(r.gpus * (BOOT_MS + TICK_MS));
}

/** The pool wrapped so that its listings fail while `down()` says so. */
const listingsFailWhile =
  (down: () => boolean) =>
  (pool: NodePool): NodePool =>
    new Proxy(pool, {
      get(target, key, receiver) {
        if (key === 'listNodes' && down()) return async () => Promise.reject(new Error('EC2 unavailable'));
        const value = Reflect.get(target, key, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });

describe("a gone node's ledger row ends within one tick of EC2's bill", () => {
  it('removed while boa was down: ended when its termination ended, not when the restarted boa saw it gone', async () => {
    const w = world({ onDisk: true });
    const first = await w.start();
    first.job(4);
    await first.tick(3);
    await first.boa.close();
    const [old] = w.group.asg.live();
    w.group.asg.replaceInstance(old!.id, 0);
    w.group.asg.step();
    w.clock.advance(10 * 60);
    const second = await w.start();
    await second.tick(3);
    expectWithinOneTick(rowAgainstBill(second.boa, old!));
  });

  // kill -9 after the group's activities were read, before the tick that would end the row committed:
  // the next life reads them again and ends it there, once.
  it('killed between reading its termination and ending its row: ended once, where the termination ended', async () => {
    const w = world({ onDisk: true });
    // Armed once the node is gone: the next read of the group's activities is the last of this life.
    const life: { die?: () => void } = {};
    const first = await w.start(
      (pool) =>
        new Proxy(pool, {
          get(target, key, receiver) {
            const value = Reflect.get(target, key, receiver);
            if (key !== 'launchedSince' || !life.die)
              return typeof value === 'function' ? value.bind(target) : value;
            return async (since: number) => {
              const read = await pool.launchedSince!(since);
              life.die?.();
              return read;
            };
          },
        }),
    );
    first.job(4);
    await first.tick(3);
    const [old] = w.group.asg.live();
    w.group.asg.replaceInstance(old!.id, 0);
    w.clock.advance(5 * 60);
    life.die = () => first.boa.db.$client.close();
    await expect(first.boa.scheduler.tick()).rejects.toThrow();
    expect(first.boa.db.$client.open).toBe(false);
    // Its data dir lock released, as the process's end would (the closed database takes no writes).
    await first.boa.close().catch(() => undefined);
    const second = await w.start();
    // Nothing of the killed tick was written: the row is still open.
    const goneAt = second.boa.db.$client.prepare('select gone_at from ledger_nodes where id = ?').pluck();
    expect(goneAt.get(old!.id)).toBeNull();
    await second.tick(2);
    expectWithinOneTick(rowAgainstBill(second.boa, old!));
  });

  it('replaced by the ASG while boa runs, held by the lifecycle hook: ended at the tick after', async () => {
    const w = world();
    const { tick, boa, job } = await w.start();
    job(4);
    await tick(3);
    const [old] = w.group.asg.live();
    w.group.asg.replaceInstance(old!.id, 10 * MINUTE);
    await tick(15);
    expectWithinOneTick(rowAgainstBill(boa, old!));
  });

  it('replaced while its listings failed: ended when its termination ended, not at the next listing', async () => {
    const w = world();
    let failing = false;
    const { tick, boa, job } = await w.start(listingsFailWhile(() => failing));
    job(4);
    await tick(3);
    const [old] = w.group.asg.live();
    failing = true;
    w.group.asg.replaceInstance(old!.id, 0);
    await tick(8);
    failing = false;
    await tick(2);
    expect(w.logs.events()).toContain('pool_unavailable');
    expectWithinOneTick(rowAgainstBill(boa, old!));
  });
});
