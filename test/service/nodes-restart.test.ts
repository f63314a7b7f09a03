import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { NodePool } from '../../src/service/ports.ts';
import { NodeRemovals } from '../../src/store/node-removals.ts';
import { type NodesWorld, nodesWorld } from './nodes-harness.ts';

/**
 * A crash in the middle of a scale-in. The pool is wrapped so that one call "kills" the service at a
 * chosen point (the call applied in AWS or not, nothing after it runs); the service is then booted
 * again over the same data dir and the same node group, with only what SQLite held.
 */
const worlds: NodesWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.cleanup();
});

class Killed extends Error {
  override name = 'Killed';
}

type CrashPoint = 'after cordon' | 'before terminate' | 'after terminate';

function crashing(point: CrashPoint): (pool: NodePool) => NodePool {
  return (pool) => {
    // Once killed, nothing of this service reaches AWS any more (a pass that carries on past one
    // failed removal must not act for a dead process).
    let killed = false;
    const kill = (message: string): never => {
      killed = true;
      throw new Killed(message);
    };
    const overrides: Partial<NodePool> =
      point === 'after cordon'
        ? {
            cordon: async (ids) => {
              await pool.cordon(ids);
              kill('kill -9 after the cordon, before it was recorded');
            },
          }
        : {
            terminate: async (ids) => {
              if (point === 'before terminate') kill('kill -9 after recording, before sending');
              await pool.terminate(ids);
              return kill('kill -9 after the termination, before it was recorded');
            },
          };
    const wrapped = new Proxy(pool, {
      get(target, key, receiver) {
        const value = (overrides as Record<PropertyKey, unknown>)[key] ?? Reflect.get(target, key, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (killed) throw new Killed('kill -9: the service is dead');
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    return wrapped;
  };
}

describe('kill -9 during a scale-in', () => {
  it.each<CrashPoint>(['after cordon', 'before terminate', 'after terminate'])(
    '%s: after the restart exactly one termination happens, of the idle node, and the ledger has no gap',
    async (point) => {
      const w = nodesWorld({ onDisk: true });
      worlds.push(w);
      const first = await w.start(crashing(point));
      const a = first.job(4);
      const b = first.job(4);
      await first.tick(3);
      const [nodeA, nodeB] = w.group.asg.live();
      const idle = w.group.asg.live().find((i) => w.group.kube.nameOf(i.id) === b.allocation[0])!;
      first.boa.service.finishJob(b.id, 'done');
      const busy = idle === nodeA ? nodeB! : nodeA!;
      await first.tick(1); // the pass dies at the crash point
      expect(
        w.logs.lines.some(
          (l) =>
            (l.event === 'node.remove-failed' || l.event === 'nodes.failed') &&
            String(l.error).includes('kill -9'),
        ),
      ).toBe(true);
      const open = new NodeRemovals(first.boa.db).open();
      expect(open).toHaveLength(1);
      expect(open[0]).toMatchObject({ nodeId: idle.id });
      await first.boa.close();

      const second = await w.start();
      await second.tick(2);
      expect(w.group.terminations.map((t) => t.instanceId)).toEqual([idle.id]);
      expect(w.group.asg.live().map((i) => i.id)).toEqual([busy.id]);
      expect(w.group.group.desiredSize).toBe(1);
      const removals = new NodeRemovals(second.boa.db).all();
      expect(removals).toMatchObject([
        {
          nodeId: idle.id,
          state: 'terminated',
          outcome: point === 'after terminate' ? 'already-gone' : 'sent',
        },
      ]);
      // The surviving job was never moved.
      expect(second.boa.service.job(a.id).allocation).toEqual(a.allocation);
      // Ledger: both nodes paid from launch, the idle one until it was seen gone, the busy one until now.
      const now = w.clock.now();
      const rows = second.boa.db.$client
        .prepare('select id, launched_at as launchedAt, gone_at as goneAt from ledger_nodes order by id')
        .all() as Array<{ id: string; launchedAt: number; goneAt: number | null }>;
      expect(rows).toEqual(
        [
          { id: idle.id, launchedAt: idle.launchedAt, goneAt: expect.any(Number) },
          { id: busy.id, launchedAt: busy.launchedAt, goneAt: null },
        ].sort((x, y) => x.id.localeCompare(y.id)),
      );
      const goneAt = rows.find((r) => r.id === idle.id)?.goneAt as number;
      expect(goneAt).toBeGreaterThanOrEqual(idle.terminatedAt as number);
      const paid = second.boa.repo.ledger.ledgerTotals(idle.launchedAt, now).paidGpuMs;
      expect(paid).toBe(4 * (goneAt - idle.launchedAt) + 4 * (now - busy.launchedAt));
    },
  );
});

describe('kill -9 between storing a resize and recording the answer', () => {
  it.each(['went through', 'never arrived'] as const)(
    'the call %s: the restart settles the stored resize from the group and sends nothing twice',
    async (outcome) => {
      const w = nodesWorld({ onDisk: true });
      worlds.push(w);
      const first = await w.start();
      first.job(4);
      first.job(4);
      await first.tick(3);
      const applied = first.boa.repo.lastResize();
      expect(applied).toMatchObject({ status: 'applied', requested: 2 });
      // The state a crash leaves: the row stored, its answer not recorded.
      let stored = applied!.id;
      if (outcome === 'went through') first.boa.repo.updateResize(stored, { status: 'requested' });
      else {
        const row = { at: w.clock.now(), target: 3, requested: 3, status: 'requested' };
        stored = first.boa.repo.insertResize(row).id;
      }
      await first.boa.close();

      const second = await w.start();
      await second.tick(2);
      const rows = second.boa.repo.recentResizes(10).reverse();
      const row = rows.find((r) => r.id === stored);
      if (outcome === 'went through') {
        expect(row).toMatchObject({ status: 'applied', requested: 2 });
      } else {
        expect(row).toMatchObject({ status: 'interrupted' });
        expect(row?.error).toMatch(/stopped before the node group answered; the group holds 2/);
      }
      // Nothing sent after the restart: the group already holds what the jobs need.
      expect(rows.at(-1)?.id).toBe(stored);
      expect(w.group.group.desiredSize).toBe(2);
      expect(w.logs.lines.some((l) => l.event === 'nodes.drift')).toBe(false);
    },
  );
});

describe('a restart after a scale-in', () => {
  it('does not take its own terminations for a change from outside, and still sees one made while it was down', async () => {
    const w = nodesWorld({ onDisk: true });
    worlds.push(w);
    const first = await w.start();
    first.job(4);
    const b = first.job(4);
    await first.tick(3);
    expect(w.group.group.desiredSize).toBe(2);
    first.boa.service.finishJob(b.id, 'done');
    await first.tick(3);
    // Scaled in by a termination, which lowers the desired size without a resize of its own.
    expect(w.group.group.desiredSize).toBe(1);
    expect(first.boa.repo.lastResize()?.requested).toBe(2);
    await first.boa.close();

    const second = await w.start();
    await second.tick(2);
    expect(w.logs.lines.filter((l) => l.event === 'nodes.drift')).toEqual([]);
    await second.boa.close();

    w.group.setDesiredOutside(3);
    const third = await w.start();
    await third.tick(1);
    expect(w.logs.lines.find((l) => l.event === 'nodes.drift')).toMatchObject({ boa: 1, aws: 3 });
  });

  it("over a data dir from before the expected size was stored: takes the group's size at the first pass, then watches it", async () => {
    const w = nodesWorld({ onDisk: true });
    worlds.push(w);
    const first = await w.start();
    first.job(4);
    const b = first.job(4);
    const c = first.job(4);
    await first.tick(3);
    expect(w.group.group.desiredSize).toBe(3);
    first.boa.service.finishJob(b.id, 'done');
    first.boa.service.finishJob(c.id, 'done');
    await first.tick(3);
    expect(w.group.group.desiredSize).toBe(1);
    expect(first.boa.repo.lastResize()?.requested).toBe(3);
    await first.boa.close();
    // What an older boa left: no stored expected size.
    const db = new Database(join(w.dataDir, 'boa.sqlite'));
    db.prepare("DELETE FROM settings WHERE key = 'nodes.expectedDesiredSize'").run();
    db.close();

    const second = await w.start();
    await second.tick(2);
    expect(w.logs.lines.filter((l) => l.event === 'nodes.drift')).toEqual([]);
    await second.boa.close();

    w.group.setDesiredOutside(2);
    const third = await w.start();
    await third.tick(1);
    expect(w.logs.lines.find((l) => l.event === 'nodes.drift')).toMatchObject({ boa: 1, aws: 2 });
  });
});
