import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { LocalNodePool } from '../../src/cloud/local/local-node-pool.ts';
import type { LocalPoolSnapshot } from '../../src/cloud/local/local-pool-state.ts';
import { captureLogs, fakeTime, START } from './fake-time.ts';

const config = { minSize: 0, maxSize: 8, bootSeconds: 90, releaseSeconds: 30, gpusPerNode: 4 };
const silent = pino({ level: 'silent' });

function setup() {
  const time = fakeTime();
  const snapshots: LocalPoolSnapshot[] = [];
  const pool = new LocalNodePool(config, time.clock, { logger: silent, onChange: (s) => snapshots.push(s) });
  return { time, pool, snapshots };
}

describe('LocalNodePool', () => {
  it('boots new nodes in exactly bootSeconds', async () => {
    const { time, pool } = setup();
    await pool.setDesiredSize(2);
    time.advance(89_999);
    expect((await pool.listNodes()).map((n) => n.ready)).toEqual([false, false]);
    time.advance(1);
    expect(await pool.listNodes()).toEqual([
      { id: 'local-1', launchedAt: START, gpus: 4, ready: true },
      { id: 'local-2', launchedAt: START, gpus: 4, ready: true },
    ]);
  });

  it('releases the newest nodes first; they stay listed (paid, not ready) for releaseSeconds', async () => {
    const { time, pool } = setup();
    await pool.setDesiredSize(2);
    time.advance(100_000);
    await pool.setDesiredSize(4);
    time.advance(100_000);
    await pool.setDesiredSize(1);
    time.advance(29_999);
    expect((await pool.listNodes()).map((n) => [n.id, n.ready])).toEqual([
      ['local-1', true],
      ['local-2', false],
      ['local-3', false],
      ['local-4', false],
    ]);
    time.advance(1);
    expect((await pool.listNodes()).map((n) => n.id)).toEqual(['local-1']);
  });

  it('launches new nodes on a scale-up during a release, and never reuses an id', async () => {
    const { time, pool } = setup();
    await pool.setDesiredSize(3);
    await pool.setDesiredSize(1);
    await pool.setDesiredSize(2);
    time.advance(200_000);
    expect((await pool.listNodes()).map((n) => n.id)).toEqual(['local-1', 'local-4']);
  });

  it('reports every change to onChange with a snapshot, and only changes', async () => {
    const { pool, snapshots } = setup();
    await pool.setDesiredSize(2);
    await pool.setDesiredSize(2);
    await pool.setDesiredSize(50);
    expect(snapshots.map((s) => s.desiredSize)).toEqual([2, 8]);
    expect(snapshots.at(-1)?.nodes).toHaveLength(8);
  });

  it('survives a crash: restored from its JSON later, nodes neither vanish nor duplicate', async () => {
    const { time, pool, snapshots } = setup();
    await pool.setDesiredSize(3);
    time.advance(60_000);
    await pool.setDesiredSize(2);
    const stored = JSON.parse(JSON.stringify(snapshots.at(-1)));
    // kill -9, restart 45 s later: booted nodes are ready, the released one is gone.
    time.advance(45_000);
    const restoredChanges: LocalPoolSnapshot[] = [];
    const restored = LocalNodePool.fromJSON(config, stored, time.clock, {
      logger: silent,
      onChange: (s) => restoredChanges.push(s),
    });
    expect(await restored.listNodes()).toEqual(await pool.listNodes());
    expect((await restored.listNodes()).map((n) => [n.id, n.ready])).toEqual([
      ['local-1', true],
      ['local-2', true],
    ]);
    expect(await restored.describe()).toEqual({ minSize: 0, maxSize: 8, desiredSize: 2 });
    expect(restoredChanges).toEqual([]);
    await restored.setDesiredSize(3);
    expect((await restored.listNodes()).map((n) => n.id)).toEqual(['local-1', 'local-2', 'local-4']);
  });

  it('restored under smaller bounds, clamps the desired size, releases the surplus and reports it', async () => {
    const { pool, snapshots, time } = setup();
    await pool.setDesiredSize(6);
    const changes: LocalPoolSnapshot[] = [];
    const restored = LocalNodePool.fromJSON({ ...config, maxSize: 4 }, snapshots.at(-1), time.clock, {
      logger: silent,
      onChange: (s) => changes.push(s),
    });
    expect((await restored.describe()).desiredSize).toBe(4);
    expect(changes.map((s) => s.nodes.filter((n) => n.releasedAt === undefined).length)).toEqual([4]);
  });

  it('logs its decisions with fields', async () => {
    const time = fakeTime();
    const logs = captureLogs();
    const pool = new LocalNodePool(config, time.clock, { logger: logs.logger });
    await pool.setDesiredSize(12);
    await pool.setDesiredSize(8);
    expect(logs.lines.find((l) => l.event === 'resize.clamped')).toMatchObject({
      target: 12,
      requested: 8,
      clampedBy: 'maxSize',
    });
    expect(logs.lines.find((l) => l.event === 'resize.skipped')).toMatchObject({
      target: 8,
      reason: 'unchanged',
    });
    expect(logs.lines.filter((l) => l.event === 'node.launched')).toHaveLength(8);
  });

  it('refuses a bad config or snapshot, naming the field', () => {
    const { clock } = fakeTime();
    expect(() => new LocalNodePool({ ...config, minSize: 9 }, clock)).toThrow(
      'invalid local node pool config: minSize: minSize must be <= maxSize',
    );
    expect(() => new LocalNodePool({ ...config, gpusPerNode: 0 }, clock)).toThrow('gpusPerNode: must be > 0');
    expect(() => LocalNodePool.fromJSON(config, { version: 2 }, clock)).toThrow(
      /invalid local node pool snapshot: version: .*; desiredSize: /,
    );
    const twice = {
      version: 1,
      desiredSize: 2,
      nextNodeNumber: 3,
      nodes: [
        { id: 'a', launchedAt: 0 },
        { id: 'a', launchedAt: 0 },
      ],
    };
    expect(() => LocalNodePool.fromJSON(config, twice, clock)).toThrow('nodes: node ids must be unique');
  });
});
