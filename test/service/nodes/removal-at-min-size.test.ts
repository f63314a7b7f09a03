import { afterEach, describe, expect, it } from 'vitest';
import { type NodesWorld, nodesWorld } from '../nodes-harness.ts';

const worlds: NodesWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.cleanup();
});

describe('a node removed at the group minimum', () => {
  it('is replaced, the desired size left as it was, and not taken for a change from outside', async () => {
    const w = nodesWorld({ provisionSeconds: 600 });
    worlds.push(w);
    // The operator keeps one node at all times.
    w.group.asg.minSize = 1;
    w.group.asg.desiredCapacity = 1;
    w.group.asg.step(w.clock.now() - 3_600_000);
    const { tick, job } = await w.start();
    const broken = w.group.asg.live()[0]!.id;
    w.group.kube.neverReadies(broken);
    const j = job(4);
    await tick(12); // the node, launched an hour ago, turns NotReady: 600 s later it is overdue

    expect(w.group.terminations).toEqual([expect.objectContaining({ instanceId: broken, decrement: false })]);
    expect(w.logs.lines.find((l) => l.event === 'node.removed')).toMatchObject({
      nodeId: broken,
      outcome: 'sent',
      replaced: true,
    });
    await tick(3); // the replacement boots and runs the job
    expect(j.allocation).toHaveLength(4);
    expect(w.group.group.desiredSize).toBe(1);
    expect(w.logs.events()).not.toContain('nodes.drift');
  });
});
