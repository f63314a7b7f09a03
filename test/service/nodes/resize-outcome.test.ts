/**
 * A resize is judged by the group as it is, not as boa last saw it: a call that failed but went through
 * is boa's own size (no drift), and whether a resize lowers the size, which lets the group pick the
 * instances that go, is read from the group at the time, not from the tick's copy.
 */
import { SetInstanceProtectionCommand } from '@aws-sdk/client-auto-scaling';
import { afterEach, describe, expect, it } from 'vitest';
import type { NodePool } from '../../../src/service/ports.ts';
import { type NodesWorld, nodesWorld } from '../nodes-harness.ts';

const worlds: NodesWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.cleanup();
});

function world() {
  const w = nodesWorld();
  worlds.push(w);
  return w;
}

/** The pool, whose resizes go through but, while `lost.replies` > 0, answer with a timeout. */
function losingReplies(pool: NodePool, lost: { replies: number }): NodePool {
  return wrapPool(pool, {
    async setDesiredSize(target) {
      const result = await pool.setDesiredSize(target);
      if (lost.replies > 0) {
        lost.replies -= 1;
        throw new Error('UpdateNodegroupConfig timed out after 3 attempts');
      }
      return result;
    },
  });
}

const driftLogs = (w: NodesWorld) => w.logs.lines.filter((l) => l.event === 'nodes.drift');

describe('a resize whose call failed', () => {
  it('that went through (its reply lost to a timeout) is taken for no drift and recorded applied', async () => {
    const w = world();
    const lost = { replies: 0 };
    const { job, tick, boa, status } = await w.start((pool) => losingReplies(pool, lost));
    job(4);
    await tick(3);
    lost.replies = 1;
    const b = job(4);
    await tick(3);
    expect(w.group.group.desiredSize).toBe(2);
    expect(b.allocation).toHaveLength(4);
    expect(driftLogs(w)).toEqual([]);
    expect((await status()).nodeGroup.lastResize).toMatchObject({ target: 2, status: 'applied' });
    const rows = boa.repo.recentResizes(10).map((r) => [r.requested, r.status, r.error]);
    expect(rows).toEqual([
      [2, 'applied', null],
      [1, 'applied', null],
    ]);
    expect(w.logs.events()).toContain('resize.went-through');
  });

  it('that went through is still no drift after a restart before the group said so', async () => {
    const w = nodesWorld({ onDisk: true });
    worlds.push(w);
    const lost = { replies: 0 };
    const first = await w.start((pool) => losingReplies(pool, lost));
    first.job(4);
    await first.tick(3);
    lost.replies = 1;
    first.job(4);
    const failed = () => first.boa.repo.recentResizes(10).some((r) => r.status === 'failed');
    for (let i = 0; i < 3 && !failed(); i++) await first.tick(1);
    expect(failed()).toBe(true);
    expect(w.group.group.desiredSize).toBe(2);
    await first.boa.close();
    const second = await w.start();
    await second.tick(2);
    expect(driftLogs(w)).toEqual([]);
    expect(second.boa.repo.recentResizes(10).map((r) => [r.requested, r.status])).toEqual([
      [2, 'applied'],
      [1, 'applied'],
    ]);
  });

  it('that did not go through stays failed and is sent again, with no drift either', async () => {
    const w = world();
    let refuse = 0;
    const { job, tick, boa } = await w.start((pool) =>
      wrapPool(pool, {
        async setDesiredSize(target) {
          if (refuse > 0) {
            refuse -= 1;
            throw new Error('UpdateNodegroupConfig timed out after 3 attempts');
          }
          return pool.setDesiredSize(target);
        },
      }),
    );
    job(4);
    await tick(3);
    refuse = 1;
    const b = job(4);
    await tick(3);
    expect(b.allocation).toHaveLength(4);
    expect(driftLogs(w)).toEqual([]);
    const statuses = boa.repo.recentResizes(10).map((r) => [r.requested, r.status]);
    expect(statuses).toEqual([
      [2, 'applied'],
      [2, 'failed'],
      [1, 'applied'],
    ]);
  });
});

describe('a resize decided from the tick', () => {
  it('protects the nodes boa keeps when someone raised the size after the tick read it', async () => {
    const w = world();
    let raiseAfterRead: number | undefined;
    const { job, tick, sync } = await w.start((pool) =>
      wrapPool(pool, {
        async describe() {
          const group = await pool.describe();
          // Someone raises the size just after boa read it, before the pass's resize.
          if (raiseAfterRead !== undefined) w.group.setDesiredOutside(raiseAfterRead);
          raiseAfterRead = undefined;
          return group;
        },
      }),
    );
    const jobs = [job(4), job(4)];
    await tick(3);
    expect(w.group.group.desiredSize).toBe(2);
    const busy = new Set(w.group.asg.live().map((i) => i.id));
    // A third job: the tick's copy says 2, so 3 is a raise there; the group already holds 4.
    raiseAfterRead = 4;
    jobs.push(job(4));
    sync();
    await tick(1);
    expect(w.group.group.desiredSize).toBe(3);
    const protectedIds = w.group.asgMock
      .commandCalls(SetInstanceProtectionCommand)
      .filter((c) => c.args[0].input.ProtectedFromScaleIn)
      .flatMap((c) => c.args[0].input.InstanceIds ?? []);
    for (const id of busy) expect(protectedIds).toContain(id);
    // The group chose among the new launches only: both busy nodes are still there.
    const live = new Set(w.group.asg.live().map((i) => i.id));
    for (const id of busy) expect(live.has(id)).toBe(true);
    await tick(3);
    for (const j of jobs) expect(j.allocation).toHaveLength(4);
  });
});

/** The pool with some of its calls replaced (the rest go to it, bound). */
function wrapPool(pool: NodePool, calls: Partial<NodePool>): NodePool {
  return new Proxy(pool, {
    get(target, key, receiver) {
      const own = (calls as Record<PropertyKey, unknown>)[key];
      if (own !== undefined) return own;
      const value = Reflect.get(target, key, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
