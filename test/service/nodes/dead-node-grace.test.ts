/**
 * A node whose kubelet is silent counts as empty once it has been NotReady for provisionSeconds (a pod
 * stopping there can never confirm it), but never within its not-ready grace, which keeps its jobs:
 * with provisionSeconds shorter than the grace, a blip must not cost the node or restart its job.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type NodesWorld, nodesWorld } from '../nodes-harness.ts';

const worlds: NodesWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.cleanup();
});

describe('a NotReady node within its grace', () => {
  it('keeps its job through a blip past provisionSeconds but within notReadyGraceSeconds', async () => {
    const w = nodesWorld({ provisionSeconds: 120, notReadyGraceSeconds: 300 });
    worlds.push(w);
    const { tick, job, boa } = await w.start();
    const a = job(4);
    await tick(3);
    const instance = w.group.asg.live().find((i) => w.group.kube.nameOf(i.id) === a.allocation[0])!.id;
    const generation = boa.service.job(a.id).generation;
    w.group.kube.neverReadies(instance);
    await tick(3); // 180 s NotReady: past provisionSeconds (120), inside the grace (300)
    w.group.kube.readiesAgain(instance);
    await tick(2);
    expect(w.group.terminations).toEqual([]);
    expect(boa.service.job(a.id).generation).toBe(generation);
  });
});
