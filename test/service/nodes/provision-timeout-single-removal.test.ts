import { afterEach, describe, expect, it } from 'vitest';
import { NodeRemovals } from '../../../src/store/node-removals.ts';
import { type NodesWorld, nodesWorld } from '../nodes-harness.ts';

const worlds: NodesWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.cleanup();
});

describe('a node that turns overdue in the tick it becomes surplus', () => {
  it('gets one removal record, closed once the node is terminated', async () => {
    const w = nodesWorld({ provisionSeconds: 600 });
    worlds.push(w);
    const { tick, job, boa } = await w.start();
    const a = job(4);
    await tick(3);
    const b = job(4);
    await tick(1); // a second node is launched for b
    const broken = w.group.asg.live().find((i) => !a.allocation.includes(w.group.kube.nameOf(i.id)))!.id;
    w.group.kube.neverReadies(broken);
    await tick(9); // 540 s after its launch: not overdue yet, b still waits for it
    boa.service.finishJob(b.id, 'done'); // the node is surplus in the minute it turns overdue
    await tick(3);

    expect(w.group.terminations.map((t) => t.instanceId)).toEqual([broken]);
    const rows = new NodeRemovals(boa.db).all().filter((r) => r.nodeId === broken);
    expect(rows.map((r) => `${r.reason}:${r.state}`)).toEqual(['provision-timeout:terminated']);
  });
});
