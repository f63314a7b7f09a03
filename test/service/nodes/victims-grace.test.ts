import { afterEach, describe, expect, it } from 'vitest';
import { type NodesWorld, nodesWorld } from '../nodes-harness.ts';

const worlds: NodesWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.cleanup();
});

describe('scale-in while a busy node is in its NotReady grace', () => {
  it('removes the idle ready node, not the busy one in its grace (whose job would restart)', async () => {
    const w = nodesWorld({ notReadyGraceSeconds: 300 });
    worlds.push(w);
    const { tick, job, boa } = await w.start();
    const a = job(4);
    const b = job(4);
    await tick(3);
    const instanceOf = (name: string) =>
      w.group.asg.live().find((i) => w.group.kube.nameOf(i.id) === name)!.id;
    const aInstance = instanceOf(a.allocation[0]!);
    const bInstance = instanceOf(b.allocation[0]!);
    const generation = a.generation;

    // a's node misses a heartbeat in the minute b finishes: one node too many, one of them NotReady.
    w.group.kube.neverReadies(aInstance);
    boa.service.finishJob(b.id, 'done');
    await tick(1);
    w.group.kube.readiesAgain(aInstance); // back well inside the 300 s grace
    await tick(2);

    const chosen = w.logs.lines.filter((l) => l.event === 'node.chosen').map((l) => l.nodeId);
    expect(chosen).toEqual([bInstance]);
    expect(w.group.terminations.map((t) => t.instanceId)).toEqual([bInstance]);
    expect(boa.service.job(a.id).generation).toBe(generation);
  });
});
