import { afterEach, describe, expect, it } from 'vitest';
import { type NodesWorld, nodesWorld } from '../nodes-harness.ts';

/**
 * A GPU pod boa did not create (a notebook that tolerates the GPU nodes' taint, or one bound there by
 * hand) on one of boa's nodes: found in review, boa counted its GPUs as free and removed the node as idle.
 */
const worlds: NodesWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.cleanup();
});

const notebook = (node: string, gpus: number) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'notebook-0', namespace: 'research' },
  spec: {
    nodeName: node,
    containers: [{ name: 'nb', image: 'jupyter', resources: { limits: { 'nvidia.com/gpu': String(gpus) } } }],
  },
  status: { phase: 'Running' },
});

describe('a GPU pod boa did not create on its node', () => {
  it('places nothing on the GPUs it holds; named once in the log', async () => {
    const w = nodesWorld();
    worlds.push(w);
    const { tick, job, boa, kube } = await w.start();
    const a = job(4);
    const b = job(4);
    await tick(3);
    expect(w.group.asg.live()).toHaveLength(2);
    const held = b.allocation[0] as string;
    expect(b.allocation.every((n) => n === held)).toBe(true);
    kube.store.create('pods', 'research', notebook(held, 2) as never);

    // b ends as c arrives: two nodes still wanted, none removed.
    boa.service.finishJob(b.id, 'done');
    const c = job(4);
    await tick(2);
    expect(w.group.terminations).toEqual([]);
    // 2 of its 4 GPUs are the notebook's: c gets the other 2 there at most (4 would be refused by the
    // kubelet, OutOfnvidia.com/gpu).
    expect(c.allocation.length).toBeGreaterThan(0);
    expect(c.allocation.filter((n) => n === held).length).toBeLessThanOrEqual(2);
    expect(a.allocation.every((n) => n !== held)).toBe(true);
    const named = w.logs.lines.filter((r) => r.event === 'node.foreign-gpu-pod');
    expect(named).toEqual([expect.objectContaining({ node: held, pod: 'research/notebook-0', gpus: 2 })]);
  });

  it("is removed when the count boa's budget allows asks for it: not kept paid while the pod lives", async () => {
    // Found in review: kept with the desired size 0 for 120 ticks, its 4 GPUs charged to boa's budget.
    const w = nodesWorld();
    worlds.push(w);
    const { tick, job, boa, kube } = await w.start();
    const a = job(4);
    const b = job(4);
    await tick(3);
    const held = b.allocation[0] as string;
    kube.store.create('pods', 'research', notebook(held, 1) as never);
    boa.service.finishJob(a.id, 'done');
    boa.service.finishJob(b.id, 'done');
    await tick(5);
    expect(w.group.asg.live()).toEqual([]);
    expect(w.group.group.desiredSize).toBe(0);
    const removed = w.logs.lines.filter((r) => r.event === 'node.foreign-pod-removed');
    expect(removed).toEqual([
      expect.objectContaining({ node: held, pods: ['research/notebook-0'], gpus: 1 }),
    ]);
  });
});
