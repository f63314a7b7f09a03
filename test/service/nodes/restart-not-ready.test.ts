/**
 * After a restart boa does not know when a node was last ready: a node that is NotReady for a moment
 * then, with a job's replica on it, counts its provision time from when boa first sees it, not from
 * its launch (which would read a 20-minute-old node as never ready and terminate it under its job).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type NodesWorld, nodesWorld } from '../nodes-harness.ts';

const worlds: NodesWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.cleanup();
});

describe('a node NotReady when boa restarts', () => {
  it('keeps a node holding a job, with no grace set, through a blip right after the restart', async () => {
    const w = nodesWorld({ onDisk: true, provisionSeconds: 900, notReadyGraceSeconds: 0 });
    worlds.push(w);
    const first = await w.start();
    const a = first.job(4);
    await first.tick(20); // 20 minutes: the node is well past its provision time
    const instance = w.group.asg.live().find((i) => w.group.kube.nameOf(i.id) === a.allocation[0])!.id;
    await first.boa.close();
    // boa restarts as the node's kubelet goes silent for a minute.
    w.group.kube.neverReadies(instance);
    const second = await w.start();
    await second.tick(1);
    w.group.kube.readiesAgain(instance);
    await second.tick(2);
    expect(w.group.terminations).toEqual([]);
  });
});
