import { afterEach, describe, expect, it } from 'vitest';
import type { NodePool, PoolNode } from '../../../src/service/ports.ts';
import { type NodesWorld, nodesWorld } from '../nodes-harness.ts';

const worlds: NodesWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.cleanup();
});

/** Every call of the pool, passed on as is: a wrapper overrides the ones it changes. */
function passThrough(pool: NodePool): NodePool {
  return {
    kind: pool.kind,
    describe: () => pool.describe(),
    setDesiredSize: (n) => pool.setDesiredSize(n),
    cordon: (ids) => pool.cordon(ids),
    protect: (ids, p) => pool.protect(ids, p),
    terminate: (ids) => pool.terminate(ids),
    listNodes: () => pool.listNodes(),
  };
}

/**
 * EKS managed node groups put a termination lifecycle hook on their ASG: after
 * TerminateInstanceInAutoScalingGroup the instance sits in Terminating:Wait (EC2 still `running`, its
 * Node cordoned and drained by EKS) for up to ~5 minutes. The emulator shuts an instance down at once;
 * this wrapper keeps each terminated instance listed for `holdMs` more, as DescribeInstances does. Its
 * memory outlives a restart of boa, as AWS's does.
 */
function terminatingWait(w: NodesWorld, holdMs: number) {
  const terminateCalls: string[] = [];
  const lastSeen = new Map<string, PoolNode>();
  const terminatedAt = new Map<string, number>();
  const wrap = (pool: NodePool): NodePool => ({
    ...passThrough(pool),
    async listNodes() {
      const nodes = await pool.listNodes();
      for (const n of nodes) lastSeen.set(n.id, n);
      const waiting: PoolNode[] = [];
      for (const [id, at] of terminatedAt) {
        if (w.clock.now() - at >= holdMs || nodes.some((n) => n.id === id)) continue;
        waiting.push({ ...lastSeen.get(id)!, ready: false, cordoned: true, waitingFor: 'cordoned' });
      }
      return [...nodes, ...waiting];
    },
    async terminate(ids) {
      terminateCalls.push(...ids);
      const result = await pool.terminate(ids);
      for (const id of result.terminated) terminatedAt.set(id, w.clock.now());
      return result;
    },
  });
  return { wrap, terminateCalls };
}

const chosenNodes = (w: NodesWorld) =>
  w.logs.lines.filter((l) => l.event === 'node.chosen').map((l) => l.nodeId);

describe('a node boa terminated that is still listed (Terminating:Wait)', () => {
  it('is neither chosen nor terminated again, and the group keeps its desired size', async () => {
    const w = nodesWorld();
    worlds.push(w);
    const aws = terminatingWait(w, 300_000);
    const { tick, job, boa } = await w.start(aws.wrap);
    const a = job(4);
    const b = job(4);
    await tick(3);
    boa.service.finishJob(b.id, 'done');
    await tick(4); // the terminated node is listed in every one of these ticks

    const [gone] = aws.terminateCalls;
    expect(a.allocation).toHaveLength(4);
    expect(aws.terminateCalls).toEqual([gone]);
    expect(chosenNodes(w)).toEqual([gone]);
    expect(w.group.group.desiredSize).toBe(1);
  });

  it('is not chosen again after a restart of boa', async () => {
    const w = nodesWorld({ onDisk: true });
    worlds.push(w);
    const aws = terminatingWait(w, 300_000);
    const first = await w.start(aws.wrap);
    first.job(4);
    const b = first.job(4);
    await first.tick(3);
    first.boa.service.finishJob(b.id, 'done');
    await first.tick(1);
    const [gone] = aws.terminateCalls;
    expect(gone).toBeDefined();
    await first.boa.close();

    const second = await w.start(aws.wrap);
    await second.tick(3);
    expect(aws.terminateCalls).toEqual([gone]);
    expect(chosenNodes(w)).toEqual([gone]);
    expect(w.group.group.desiredSize).toBe(1);
  });

  it('gets no jobs when the listing after its termination fails and the last one is reused', async () => {
    const w = nodesWorld();
    worlds.push(w);
    let listingFails = false;
    const wrap = (pool: NodePool): NodePool => ({
      ...passThrough(pool),
      listNodes: () =>
        listingFails ? Promise.reject(new Error('DescribeInstances throttled')) : pool.listNodes(),
    });
    const { tick, job, boa } = await w.start(wrap);
    job(4);
    const b = job(4);
    await tick(3);
    boa.service.finishJob(b.id, 'done');
    await tick(1); // b's idle node is chosen, cordoned and terminated in this tick's pass
    const gone = w.group.terminations[0]!.instanceId;
    listingFails = true; // the last listing, where the node was still ready, is reused
    const c = job(4);
    await tick(1);
    expect(c.allocation).not.toContain(w.group.kube.nameOf(gone));
  });
});
