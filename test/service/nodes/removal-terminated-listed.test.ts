import { afterEach, describe, expect, it } from 'vitest';
import type { NodePool } from '../../../src/service/ports.ts';
import { type NodesWorld, nodesWorld } from '../nodes-harness.ts';
import { passThrough, terminatingWait } from './terminating-wait.ts';

const worlds: NodesWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.cleanup();
});

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
