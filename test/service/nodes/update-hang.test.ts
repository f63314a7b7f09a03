/**
 * An EKS update of boa's own that stays InProgress for many minutes (EKS updates can, while the group
 * scales or a node will not drain). The node pass must not wait for it: every tick's pass ends within
 * its tick, removals go on, no update that EKS would refuse is sent meanwhile, and the size wanted is
 * sent once the update has ended. The pool's sleeps run on the test's clock (clock-sleeps.ts).
 */
import { DescribeUpdateCommand, UpdateNodegroupConfigCommand } from '@aws-sdk/client-eks';
import { afterEach, describe, expect, it } from 'vitest';
import { type NodesWorld, nodesWorld, TICK_SECONDS } from '../nodes-harness.ts';
import { ManualClock } from '../harness.ts';
import { clockSleeps, tickInTime } from './clock-sleeps.ts';

const worlds: NodesWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.cleanup();
});

function hangingWorld(options: { onDisk?: boolean } = {}) {
  const clock = new ManualClock();
  const sleeps = clockSleeps(clock);
  const w = nodesWorld({ ...options, clock, sleep: sleeps.sleep });
  worlds.push(w);
  const sizesSent = () =>
    w.group.eksMock
      .commandCalls(UpdateNodegroupConfigCommand)
      .map((c) => c.args[0].input.scalingConfig?.desiredSize);
  const describeUpdates = () => w.group.eksMock.commandCalls(DescribeUpdateCommand).length;
  /** A service over the world (again: a restart over the same data dir and node group). */
  const boot = async () => {
    const started = await w.start();
    /** Ticks; how many of their node passes ended within their tick. */
    const ticks = async (count: number) => {
      let ended = 0;
      for (let i = 0; i < count; i++)
        if (await tickInTime(started, w.clock, sleeps, TICK_SECONDS * 1000)) ended++;
      return ended;
    };
    return { ...started, ticks };
  };
  return { w, boot, sizesSent, describeUpdates };
}

describe("an EKS update of boa's own that stays InProgress", () => {
  it('holds up no node pass: removals go on, nothing conflicting is sent, the size wanted goes once EKS is free', async () => {
    const { w, boot, sizesSent, describeUpdates } = hangingWorld();
    const { boa, job, ticks, status } = await boot();
    const a = job(4);
    const b = job(4);
    expect(await ticks(3)).toBe(3);
    expect(a.allocation).toHaveLength(4);
    expect(b.allocation).toHaveLength(4);

    // From now on EKS keeps every update InProgress (it still sets the ASG's desired size).
    w.group.setUpdatePolls(1_000_000);
    const c = job(4);
    expect(await ticks(1)).toBe(1); // sends desired 3; its pass does not wait for the update to end
    expect(sizesSent()).toEqual([2, 3]);
    expect((await status()).nodeGroup.lastResize).toMatchObject({ target: 3, status: 'requested' });

    // Two jobs end: their nodes are removed while the update is still InProgress.
    boa.service.finishJob(b.id, 'done');
    boa.service.finishJob(c.id, 'done');
    const before = describeUpdates();
    expect(await ticks(3)).toBe(3);
    expect(w.group.terminations).toHaveLength(2);
    expect(w.group.group.desiredSize).toBe(1);
    expect(w.group.asg.live()).toHaveLength(1);
    // No polling: one DescribeUpdate a tick (the tick's describe), and one for the group read again
    // after the pass's terminations.
    expect(describeUpdates() - before).toBe(4);

    // A job that needs two more nodes: EKS would refuse an update now, so none is sent; it waits.
    const d = job(8);
    expect(await ticks(10)).toBe(10);
    expect(sizesSent()).toEqual([2, 3]);
    expect(w.logs.lines.filter((l) => l.event === 'resize.in-use')).toEqual([]);
    expect(w.logs.lines.filter((l) => l.event === 'nodes.update-wait')).toHaveLength(1);
    expect((await status()).nodeGroup).toMatchObject({
      lastResize: { target: 3, status: 'requested' },
      updateInFlight: 'update-2',
    });

    // EKS ends the update: the next pass records it and sends what is wanted now.
    w.group.updates.get('update-2')!.pollsLeft = 0;
    w.group.setUpdatePolls(0);
    expect(await ticks(1)).toBe(1);
    expect(sizesSent()).toEqual([2, 3, 3]);
    const resizes = boa.repo.recentResizes(10).map((r) => [r.requested, r.status]);
    expect(resizes.slice(0, 2)).toEqual([
      [3, 'applied'],
      [3, 'applied'],
    ]);
    expect(await ticks(3)).toBe(3);
    expect((await status()).nodeGroup.updateInFlight).toBeNull();
    expect(d.allocation).toHaveLength(8);
    expect(w.logs.lines.filter((l) => l.event === 'nodes.failed')).toEqual([]);
  });

  it('a restart while it runs follows it as before: nothing sent twice or refused, the size sent once EKS is free', async () => {
    const { w, boot, sizesSent } = hangingWorld({ onDisk: true });
    const first = await boot();
    first.job(4);
    expect(await first.ticks(3)).toBe(3);
    w.group.setUpdatePolls(1_000_000);
    const b = first.job(4);
    expect(await first.ticks(3)).toBe(3);
    expect(sizesSent()).toEqual([1, 2]);
    expect(b.allocation).toHaveLength(4);
    // The service stops (only SQLite survives); the update it sent is still InProgress.
    expect(first.boa.repo.lastResize()).toMatchObject({ updateId: 'update-2', status: 'requested' });
    await first.boa.close();
    const second = await boot();
    second.job(4);
    // The restarted service follows update-2 from its stored row: no resize is sent while it runs
    // (EKS would refuse it), none is recorded failed, and no pass waits it out.
    expect(await second.ticks(5)).toBe(5);
    expect(sizesSent()).toEqual([1, 2]);
    expect(w.group.updates.size).toBe(2);
    expect(second.boa.repo.lastResize()).toMatchObject({ updateId: 'update-2', status: 'requested' });
    expect(second.boa.repo.recentResizes(20).filter((r) => r.status === 'failed')).toEqual([]);

    w.group.updates.get('update-2')!.pollsLeft = 0;
    w.group.setUpdatePolls(0);
    expect(await second.ticks(1)).toBe(1);
    // Settled from the group, then the size wanted sent at once.
    const rows = second.boa.repo.recentResizes(20).reverse();
    expect(rows.find((r) => r.updateId === 'update-2')).toMatchObject({ requested: 2, status: 'applied' });
    expect(w.group.updates.size).toBe(3);
    expect(w.group.group.desiredSize).toBe(3);
    expect(second.boa.repo.lastResize()).toMatchObject({ requested: 3, status: 'applied' });
  });

  it('that ends Failed: its resize is recorded failed, taken for no drift, and sent again', async () => {
    const { w, boot, sizesSent } = hangingWorld();
    const { job, ticks, boa } = await boot();
    job(4);
    expect(await ticks(3)).toBe(3);
    w.group.setUpdatePolls(1_000_000);
    w.group.failNextUpdates(); // applies nothing, as a Failed update does
    const b = job(4);
    expect(await ticks(3)).toBe(3);
    expect(sizesSent()).toEqual([1, 2]);
    expect(boa.repo.lastResize()).toMatchObject({ requested: 2, status: 'requested', updateId: 'update-2' });

    w.group.updates.get('update-2')!.pollsLeft = 0;
    w.group.succeedNextUpdates();
    w.group.setUpdatePolls(0);
    expect(await ticks(1)).toBe(1);
    const rows = boa.repo.recentResizes(10);
    expect(rows.find((r) => r.updateId === 'update-2')).toMatchObject({
      status: 'failed',
      error: 'EKS update update-2 ended with the group at 1, not 2',
    });
    expect(w.logs.lines.find((l) => l.event === 'update.settled')).toMatchObject({ status: 'Failed' });
    // Sent again at once, with a new token (the failed update's would be answered with it).
    expect(sizesSent()).toEqual([1, 2, 2]);
    const tokens = w.group.updateCalls().map((c) => c.args[0].input.clientRequestToken);
    expect(new Set(tokens).size).toBe(3);
    expect(rows[0]).toMatchObject({ updateId: 'update-3', status: 'applied' });
    expect(w.logs.lines.filter((l) => l.event === 'nodes.drift')).toEqual([]);
    expect(await ticks(2)).toBe(2);
    expect(b.allocation).toHaveLength(4);
  });
});
