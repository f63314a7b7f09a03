/**
 * The capacity backoff across a restart of boa. It was in memory: a restart while nodes kept failing to
 * come up (a broken bootstrap or AMI) forgot the wait under way and launched a whole wave at once, one
 * more wave of nodes paid for nothing per restart; and the scaling activities' last launch failure, read
 * again, counted as a first one, its wait back at the base.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { CapacityBackoff } from '../../../src/service/nodes/capacity.ts';
import { type NodesWorld, nodesWorld } from '../nodes-harness.ts';

const worlds: NodesWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.cleanup();
});

describe('the capacity backoff across a restart', () => {
  it('nodes that never join: a restart goes on with the wait under way, launching nothing until it ends', async () => {
    const w = nodesWorld({ sleep: async () => undefined, maxSize: 4, provisionSeconds: 300, onDisk: true });
    worlds.push(w);
    for (let n = 1; n <= 200; n++) w.group.kube.neverJoins(`i-${String(n).padStart(17, '0')}`);
    const first = await w.start();
    for (let i = 0; i < 3; i++) first.job(4);
    // Until the second wave has timed out: a wait of twice the base (120 s here) under way.
    let capacity = (await first.status()).nodeGroup.capacity;
    for (let i = 0; i < 60 && capacity.failures < 2; i++) {
      await first.tick(1);
      capacity = (await first.status()).nodeGroup.capacity;
    }
    expect(capacity.failures).toBe(2);
    const until = Date.parse(capacity.backoffUntil);
    expect(until).toBeGreaterThan(w.clock.now() + 60_000);
    await first.boa.close();

    const launched = w.group.asg.instances.length;
    const second = await w.start();
    for (let i = 0; i < 3; i++) second.job(4);
    await second.tick(1);
    const restored = (await second.status()).nodeGroup.capacity;
    expect(restored).toMatchObject({ failures: 2, backoffUntil: capacity.backoffUntil });
    expect(restored.reason).toMatch(/never became ready for jobs in 300 s/);
    while (w.clock.now() < until - 60_000) {
      await second.tick(1);
      expect(w.group.asg.instances.length, 'a launch during the wait').toBe(launched);
    }
    // Once it ends, boa asks again (and a third wave that fails doubles the wait, from 2, not from 0).
    for (let i = 0; i < 4; i++) await second.tick(1);
    expect(w.group.asg.instances.length).toBeGreaterThan(launched);
  });

  it('a launch failure read again after the restart is not counted a second time', async () => {
    const w = nodesWorld({ sleep: async () => undefined, maxSize: 4, onDisk: true });
    worlds.push(w);
    const first = await w.start();
    w.group.setCapacity(1);
    first.job(4);
    first.job(4);
    await first.tick(2);
    const before = (await first.status()).nodeGroup.capacity;
    expect(before.failures).toBe(1);
    const said = () => w.logs.lines.filter((l) => l.event === 'nodes.capacity').length;
    const saidBefore = said();
    await first.boa.close();
    const second = await w.start();
    expect((await second.status()).nodeGroup.capacity).toMatchObject(before);
    second.job(4);
    second.job(4);
    await second.tick(1);
    expect((await second.status()).nodeGroup.capacity.failures).toBe(1);
    expect(said()).toBe(saidBefore);
  });
});

describe('the kept backoff state', () => {
  const policy = { baseMs: 60_000, maxMs: 1_800_000 };
  it('round-trips through JSON, infinities as null', () => {
    const backoff = new CapacityBackoff(policy);
    expect(backoff.state()).toEqual({
      failures: 0,
      until: null,
      reason: null,
      lastFailureAt: null,
      neverReadySince: null,
    });
    backoff.neverReady(1_000, 'node i-1 never became ready');
    const kept = JSON.parse(JSON.stringify(backoff.state()));
    const again = new CapacityBackoff(policy, kept);
    expect(again.state()).toEqual(backoff.state());
    expect(again.view(1_000)).toEqual({
      backoffUntil: 61_000,
      failures: 1,
      reason: 'node i-1 never became ready',
    });
  });

  it.each([null, 'x', 7, { failures: 'two' }, { failures: -1 }, { failures: 1, until: 'soon' }])(
    'a state of another shape (%j) is not taken: the backoff starts afresh',
    (kept) => {
      expect(new CapacityBackoff(policy, kept).view(0)).toEqual({
        backoffUntil: null,
        failures: 0,
        reason: null,
      });
    },
  );
});
