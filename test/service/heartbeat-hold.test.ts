import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bootService, InlinePlanComputer } from '../../src/service/boot.ts';
import { resolveConfig } from '../../src/service/config.ts';
import { captureLogs } from '../cloud/fake-time.ts';
import { ManualClock } from './harness.ts';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function world(
  guardMinutes: number | undefined,
  options: {
    dataDir?: string;
    clock?: ManualClock;
    failing?: boolean;
    terminationGraceSeconds?: number;
    tickSeconds?: number;
  } = {},
) {
  const clock = options.clock ?? new ManualClock();
  const dataDir = options.dataDir ?? ':memory:';
  const logs = captureLogs();
  let failing = options.failing ?? false;
  const config = resolveConfig({
    dataDir,
    token: 'operator-token-0123456789',
    budget: 8,
    gpusPerNode: 4,
    tickSeconds: options.tickSeconds ?? 60,
    // The jobs here launch themselves and never report: keep them from being declared lost.
    leaseSeconds: 86_400,
    local: { maxNodes: 16, bootSeconds: 0, releaseSeconds: 0 },
    ...(guardMinutes !== undefined ? { guardMinutes } : {}),
    ...(options.terminationGraceSeconds !== undefined
      ? { terminationGraceSeconds: options.terminationGraceSeconds }
      : {}),
  });
  const boa = await bootService(config, {
    clock,
    computer: new InlinePlanComputer(),
    logger: logs.logger,
    dataDir,
    metrics: {
      put: async () => {
        if (failing) throw new Error('CloudWatch PutMetricData: ServiceUnavailable');
      },
    },
  });
  closers.push(() => boa.close());
  const tick = async (count = 1) => {
    for (let i = 0; i < count; i++) {
      await boa.scheduler.tick();
      await boa.scheduler.settle();
      await new Promise((resolve) => setImmediate(resolve)); // the metrics put settles
      clock.advance(options.tickSeconds ?? 60);
    }
  };
  const job = (name: string) => boa.service.registerJob('cifar10', name).job;
  const desired = async () => (await boa.pool.describe()).desiredSize;
  const budget = async () => {
    const res = await boa.app.request('/v1/budget', { headers: { authorization: `Bearer ${boa.token}` } });
    return (await res.json()) as any;
  };
  const setBudget = (gpuHoursPerHour: number) =>
    boa.app.request('/v1/budget', {
      method: 'PUT',
      headers: { authorization: `Bearer ${boa.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ gpuHoursPerHour }),
    });
  return { boa, clock, logs, tick, job, desired, budget, setBudget, fail: (on: boolean) => (failing = on) };
}

describe("boa's heartbeat not reaching CloudWatch, with the budget guard deployed", () => {
  it("holds the group to the guard's size until a heartbeat is delivered again", async () => {
    const w = await world(15);
    await w.tick(600); // ten quiet hours: the window has room for more than the budget's 2 nodes
    w.fail(true);
    const jobs = ['a', 'b', 'c', 'd'].map(w.job);
    await w.tick(3);
    // The room the quiet hours left lets boa run wider than the budget's 2 nodes for a while.
    const free = await w.desired();
    expect(free).toBeGreaterThan(2);
    expect((await w.budget()).control.heartbeatHoldNodes).toBeNull();

    await w.tick(8); // 10 minutes without a delivered heartbeat: 5 before the guard would act
    expect(await w.desired()).toBe(2);
    expect(jobs.reduce((gpus, j) => gpus + j.allocation.length, 0)).toBeLessThanOrEqual(8);
    expect((await w.budget()).control.heartbeatHoldNodes).toBe(2);
    expect(w.logs.lines.filter((l) => l.event === 'heartbeat.hold')).toHaveLength(1);

    w.fail(false);
    // Delivered again, but kept 5 minutes (the hold's lead on the guard at 15) until the guard can read it.
    await w.tick(5);
    expect(await w.desired()).toBe(2);
    expect((await w.budget()).control.heartbeatHoldNodes).toBe(2);
    expect(w.logs.events()).toContain('heartbeat.hold-kept');
    expect(w.logs.events()).not.toContain('heartbeat.hold-released');
    await w.tick(1);
    expect(await w.desired()).toBeGreaterThan(2);
    expect((await w.budget()).control.heartbeatHoldNodes).toBeNull();
    expect(w.logs.events()).toContain('heartbeat.hold-released');
  });

  it("holds a node's drain before the guard would act when that is longer than 5 minutes", async () => {
    // A grace of 9 minutes: emptying a node takes up to 12 (the grace, two ticks and a minute), so the
    // hold starts 12 minutes before the guard's 15 are up, and the nodes it gives up are empty in time.
    const w = await world(15, { terminationGraceSeconds: 540 });
    expect(w.logs.lines.find((l) => l.event === 'heartbeat.hold-early')?.msg).toMatch(
      /takes up to 12 minutes, over half.*holds to the guard's size after 3\.0 minutes.*guardMinutes at least 24/,
    );
    await w.tick(600);
    w.fail(true);
    for (const name of ['a', 'b', 'c', 'd']) w.job(name);
    await w.tick(2);
    expect((await w.budget()).control.heartbeatHoldNodes).toBeNull();
    expect(await w.desired()).toBeGreaterThan(2);
    await w.tick(1); // 3 minutes since the last delivered heartbeat
    expect((await w.budget()).control.heartbeatHoldNodes).toBe(2);
    expect(await w.desired()).toBe(2);
    // Kept after heartbeats get through again for as long as the guard may take to read one (5
    // minutes), not for the drain.
    w.fail(false);
    await w.tick(5);
    expect((await w.budget()).control.heartbeatHoldNodes).toBe(2);
    await w.tick(1);
    expect((await w.budget()).control.heartbeatHoldNodes).toBeNull();
  });

  it('a drain longer than the silence leaves is said, and still holds no earlier than two ticks and a minute', async () => {
    const w = await world(15, { terminationGraceSeconds: 1200 });
    expect(w.logs.lines.find((l) => l.event === 'heartbeat.hold-early')?.msg).toMatch(
      /takes up to 23 minutes, more than the budget guard's silence \(guardMinutes 15\) leaves once boa holds \(after 3\.0 minutes/,
    );
    await w.tick(600);
    w.fail(true);
    await w.tick(2);
    expect((await w.budget()).control.heartbeatHoldNodes).toBeNull();
  });

  it('never holds while heartbeats get through, at the shortest guard and the slowest tick (5 minutes, 120 s)', async () => {
    const w = await world(5, { tickSeconds: 120 });
    await w.tick(300);
    for (const name of ['a', 'b', 'c', 'd']) w.job(name);
    await w.tick(10);
    expect((await w.budget()).control.heartbeatHoldNodes).toBeNull();
    expect(w.logs.events()).not.toContain('heartbeat.hold');
  });

  it('a drain within 5 minutes keeps the hold at 5 minutes before the guard, and says nothing', async () => {
    const w = await world(15, { terminationGraceSeconds: 120 });
    expect(w.logs.events()).not.toContain('heartbeat.hold-early');
  });

  it('never holds without a guard to agree with (guardMinutes unset)', async () => {
    const w = await world(undefined);
    await w.tick(600);
    w.fail(true);
    for (const name of ['a', 'b', 'c', 'd']) w.job(name);
    await w.tick(3);
    const free = await w.desired();
    expect(free).toBeGreaterThan(2);
    await w.tick(27);
    expect(await w.desired()).toBeGreaterThan(2);
    expect(w.logs.events()).not.toContain('heartbeat.hold');
  });

  it('holds to the budget the guard last read: a raise during the silence has not reached it', async () => {
    const w = await world(15);
    await w.tick(600);
    w.fail(true);
    for (const name of ['a', 'b', 'c', 'd']) w.job(name);
    expect((await w.setBudget(16)).status).toBe(200); // 4 nodes, but the guard still reads 8: 2
    await w.tick(12);
    expect((await w.budget()).control.heartbeatHoldNodes).toBe(2);
    expect(await w.desired()).toBe(2);
  });

  it("holds to the budget before a raise delivered just before the silence: the guard's bucket holds both", async () => {
    const w = await world(15);
    await w.tick(600);
    expect((await w.setBudget(16)).status).toBe(200);
    await w.tick(1); // 16 delivered a minute after the last 8: the guard's newest 2-minute bucket may hold both
    w.fail(true);
    for (const name of ['a', 'b', 'c', 'd']) w.job(name);
    await w.tick(12);
    expect((await w.budget()).control.heartbeatHoldNodes).toBe(2);
    expect(await w.desired()).toBe(2);
  });

  it('a restart during the silence holds as soon as the guard would act, not after a silence of its own', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'boa-hold-'));
    closers.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    const clock = new ManualClock();
    const first = await world(15, { dataDir, clock });
    await first.tick(600);
    first.fail(true);
    await first.tick(5); // 5 minutes undelivered: no hold yet
    expect((await first.budget()).control.heartbeatHoldNodes).toBeNull();
    await first.boa.close();
    clock.advance(6 * 60); // down for 6 minutes: 11 without a heartbeat
    const second = await world(15, { dataDir, clock, failing: true });
    for (const name of ['a', 'b', 'c', 'd']) second.job(name);
    await second.tick(1);
    expect((await second.budget()).control.heartbeatHoldNodes).toBe(2);
    expect(await second.desired()).toBeLessThanOrEqual(2);
  });
});
