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
  it('keeps the node (not idle) and places nothing on the GPUs it holds; named once in the log', async () => {
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

    boa.service.finishJob(b.id, 'done');
    await tick(2);
    // b's node is idle of boa's jobs, but the notebook runs there: it stays.
    expect(w.group.terminations).toEqual([]);
    expect(w.group.asg.live()).toHaveLength(2);

    // 2 of its 4 GPUs are the notebook's: a new job gets the other 2 there at most (4 would be refused
    // by the kubelet, OutOfnvidia.com/gpu).
    const c = job(4);
    await tick(2);
    expect(c.allocation.length).toBeGreaterThan(0);
    expect(c.allocation.filter((n) => n === held).length).toBeLessThanOrEqual(2);
    expect(a.allocation.every((n) => n !== held)).toBe(true);
    const named = w.logs.lines.filter((r) => r.event === 'node.foreign-gpu-pod');
    expect(named).toEqual([expect.objectContaining({ node: held, pod: 'research/notebook-0', gpus: 2 })]);
  });
});
