/**
 * After a restart whose listings of the pool all fail (EC2 AccessDenied, the Kubernetes API down), boa
 * changes no job and no node. Found in review: it still published its Heartbeat, so the silence alarm
 * and the budget guard saw a boa holding the group while nothing did, and it read boot's empty node list
 * as 0 nodes and 0 GPUs paid (CloudWatch, /metrics, /v1/status) while the nodes ran on.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { MetricDatum, NodePool } from '../../../src/service/ports.ts';
import { type NodesWorld, nodesWorld } from '../nodes-harness.ts';

const worlds: NodesWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.cleanup();
});

/** The pool, with its listings failing while `failing.now` is set. */
function listingsFail(failing: { now: boolean }) {
  return (pool: NodePool): NodePool =>
    new Proxy(pool, {
      get(target, prop, receiver) {
        if (prop === 'listNodes' && failing.now)
          return async () => {
            throw new Error('injected: AccessDenied ec2:DescribeInstances');
          };
        const value = Reflect.get(target, prop, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
}

const named = (batches: MetricDatum[][], name: string) =>
  batches.flat().filter((datum) => datum.name === name);

describe('a restart whose node listings fail', () => {
  it('sends no Heartbeat or node counts, reads paid from the ledger, and beats again once listed', async () => {
    const w = nodesWorld({ maxSize: 12, onDisk: true });
    worlds.push(w);
    const first = await w.start();
    first.job(8);
    first.job(4);
    await first.tick(20);
    const paidBefore = (await first.status()).gpus.paid as number;
    expect(paidBefore).toBeGreaterThan(0);
    await first.boa.close();

    const failing = { now: true };
    const second = await w.start(listingsFail(failing));
    const from = w.metrics.length;
    await second.tick(10);
    const blind = w.metrics.slice(from);
    expect(blind.length).toBe(10);
    // No Heartbeat: the guard outside takes the group over after its silence, as with boa down.
    expect(named(blind, 'Heartbeat')).toEqual([]);
    expect(named(blind, 'ActualNodes')).toEqual([]);
    expect(named(blind, 'DesiredNodes')).toEqual([]);
    // Paid as the ledger books it (its nodes stay open until a listing says they are gone), not 0.
    expect(named(blind, 'PaidGpuHoursPerHour').map((d) => d.value)).toEqual(Array(10).fill(paidBefore));
    const status = await second.status();
    expect(status.nodeGroup.actualNodes).toBeNull();
    expect(status.nodeGroup.readyNodes).toBeNull();
    expect(status.gpus.paid).toBe(paidBefore);
    const prometheus = await (
      await second.boa.app.request('/metrics', { headers: { authorization: `Bearer ${second.boa.token}` } })
    ).text();
    // prom-client writes NaN as Nan.
    expect(prometheus).toMatch(/^boa_nodes\{kind="actual"\} Nan$/m);
    expect(prometheus).toMatch(new RegExp(`^boa_gpus\\{kind="paid"\\} ${paidBefore}$`, 'm'));

    failing.now = false;
    const listedFrom = w.metrics.length;
    await second.tick(1);
    const listed = w.metrics.slice(listedFrom);
    expect(named(listed, 'Heartbeat').map((d) => d.value)).toEqual([1]);
    expect(named(listed, 'ActualNodes').map((d) => d.value)).toEqual([w.group.asg.live().length]);
    expect((await second.status()).nodeGroup.actualNodes).toBe(w.group.asg.live().length);
  });
});
