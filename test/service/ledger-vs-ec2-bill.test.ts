import { afterEach, describe, expect, it } from 'vitest';
import type Database from 'better-sqlite3';
import type { EmulatedInstance } from '../cloud/emulated-asg.ts';
import type { NodePool } from '../../src/service/ports.ts';
import { type NodesWorld, nodesWorld, type NodesWorldOptions } from './nodes-harness.ts';

/**
 * The budget promise on AWS: the ledger's paid GPU-time must be at least what EC2 bills for the node
 * group's instances (Linux on demand: per second, 60 s minimum, from running until shutting-down). The
 * emulated group is the bill's source here: each instance runs from launch + BOOT_MS (pending before)
 * until a lifecycle hook lets it go, then shuts down.
 */
const worlds: NodesWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.cleanup();
});

const BOOT_MS = 60_000; // nodes-harness's EC2 pending time
const GPUS = 4;
const MINUTE = 60_000;

/** EC2's billed milliseconds of one instance by `now` (0: terminated while pending, never billed). */
function ec2BilledMs(i: EmulatedInstance, now: number): number {
  const running = i.launchedAt + BOOT_MS;
  const stopped = i.terminatedAt === undefined ? now : (i.hookUntil ?? i.terminatedAt);
  if (Math.min(stopped, now) <= running) return 0;
  return Math.max(MINUTE, Math.min(stopped, now) - running);
}

/**
 * Per instance, not in total: the ledger's over-count elsewhere (pending seconds, the tick that sees a
 * node gone) must not hide an instance it never charged.
 */
function unpaid(w: NodesWorld, boa: { db: { $client: Database.Database } }) {
  const now = w.clock.now();
  const span = boa.db.$client.prepare(
    'select gpus, launched_at as launchedAt, gone_at as goneAt from ledger_nodes where id = ?',
  );
  return w.group.asg.instances.flatMap((i) => {
    const billed = ec2BilledMs(i, now) * GPUS;
    const row = span.get(i.id) as { gpus: number; launchedAt: number; goneAt: number | null } | undefined;
    const paid = row ? ((row.goneAt ?? now) - row.launchedAt) * row.gpus : 0;
    return paid >= billed ? [] : [{ id: i.id, billed, paid }];
  });
}

const billedAny = (w: NodesWorld) => w.group.asg.instances.some((i) => ec2BilledMs(i, w.clock.now()) > 0);

/** A world cleaned up after the test. */
function world(options?: NodesWorldOptions): NodesWorld {
  const w = nodesWorld(options);
  worlds.push(w);
  return w;
}

/** Starts boa (its pool wrapped by `wrap`) with a 4-GPU job, and ticks `ticks` times. */
async function startWithJob(w: NodesWorld, ticks: number, wrap?: (pool: NodePool) => NodePool) {
  const started = await w.start(wrap);
  started.job(4);
  await started.tick(ticks);
  return started;
}

/**
 * The ASG replaces a node, and replaces the replacement 30 s after it reached running, before boa's next
 * tick: EC2 bills it 60 s (its minimum). Returns the replacement's id.
 */
async function replacementGoneBetweenListings(w: NodesWorld, tick: (n: number) => Promise<unknown>) {
  const [old] = w.group.asg.live();
  w.group.asg.replaceInstance(old!.id, 0);
  w.group.asg.step(); // the replacement launches: pending at the next tick
  await tick(1);
  const [replacement] = w.group.asg.live();
  w.clock.advance(30); // running since the tick, for 30 s
  w.group.asg.replaceInstance(replacement!.id, 0);
  w.clock.advance(30);
  return replacement!.id;
}

describe("the ledger's paid GPU-time against EC2's bill", () => {
  it('covers an instance the ASG replaces, held in Terminating:Wait by the lifecycle hook', async () => {
    const w = world();
    const { tick, boa } = await startWithJob(w, 3);
    const [old] = w.group.asg.live();
    w.group.asg.replaceInstance(old!.id, 10 * MINUTE);
    await tick(15);
    expect(billedAny(w)).toBe(true);
    expect(unpaid(w, boa)).toEqual([]);
  });

  it('covers an instance that never joins Kubernetes, until boa removes it', async () => {
    const w = world({ registerMs: 24 * 3_600_000, provisionSeconds: 600 });
    const { boa } = await startWithJob(w, 20);
    expect(billedAny(w)).toBe(true);
    expect(unpaid(w, boa)).toEqual([]);
  });

  // The ledger opens a node from a listing that shows it running (DescribeInstances, pending and
  // running only); before the group's launches were read (service/unseen-nodes.ts), an instance that
  // came and went between two listings was never charged.
  it('covers an instance that ran and went between two listings', async () => {
    const w = world();
    const { tick, boa } = await startWithJob(w, 3);
    await replacementGoneBetweenListings(w, tick);
    await tick(3);
    expect(unpaid(w, boa)).toEqual([]);
  });

  // The same at a larger scale: while boa is down (a crash, an upgrade) nothing is listed; here a
  // replacement ran 9 minutes, launched and gone meanwhile, before the ASG replaced it again.
  it('covers an instance launched and gone while boa was down', async () => {
    const w = world({ onDisk: true });
    const first = await startWithJob(w, 3);
    await first.boa.close();
    const [old] = w.group.asg.live();
    w.group.asg.replaceInstance(old!.id, 0);
    w.group.asg.step();
    w.clock.advance(10 * 60);
    const [replacement] = w.group.asg.live();
    w.group.asg.replaceInstance(replacement!.id, 0);
    w.group.asg.step();
    w.clock.advance(10 * 60);
    const second = await w.start();
    await second.tick(3);
    expect(unpaid(w, second.boa)).toEqual([]);
  });

  it('charges it at a later listing when the launches cannot be read at the first', async () => {
    const w = world();
    let failures = 2;
    const { tick, boa } = await startWithJob(
      w,
      3,
      (pool) =>
        new Proxy(pool, {
          get(target, key, receiver) {
            if (key === 'launchedSince' && failures > 0) {
              return async () => {
                failures -= 1;
                throw new Error('Rate exceeded');
              };
            }
            const value = Reflect.get(target, key, receiver);
            return typeof value === 'function' ? value.bind(target) : value;
          },
        }),
    );
    const replacement = await replacementGoneBetweenListings(w, tick);
    // Longer than the look-back's margin before the last listing (10 minutes).
    failures = 15;
    await tick(15);
    expect(unpaid(w, boa).map((u) => u.id)).toEqual([replacement]);
    await tick(1);
    expect(unpaid(w, boa)).toEqual([]);
    expect(w.logs.events()).toContain('node.launches-unreadable');
  });
});
