/**
 * The target rises back while a node chosen for scale-in is still draining: the removal is called off
 * and the warm node kept, instead of draining it while a new node launched beside it for the target (the
 * budget's nodes plus one paid for, and a cold boot for a warm node; found in review).
 */
import { UpdateNodegroupConfigCommand } from '@aws-sdk/client-eks';
import { afterEach, expect, it } from 'vitest';
import { NodeRemovals } from '../../../src/store/node-removals.ts';
import { nodeName, type NodesWorld, nodesWorld } from '../nodes-harness.ts';
import { gracefulExecutor } from './graceful-executor.ts';

const worlds: NodesWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.cleanup();
});

it('calls a scale-in off when the target rises while its node drains, and launches nothing', async () => {
  const w = nodesWorld();
  worlds.push(w);
  const ex = gracefulExecutor();
  const { tick, job, boa } = await w.start(undefined, ex.executor);
  const a = job(4, { command: ['train'] });
  const b = job(4, { command: ['train'] });
  await tick(3);
  expect(w.group.asg.live()).toHaveLength(2);
  const bNode = w.group.asg.live().find((i) => nodeName(w.group, i.id) === b.allocation[0])!;
  boa.service.finishJob(b.id, 'cancelled');
  await tick(1); // b's node chosen and cordoned; its replica is still stopping
  expect(w.group.terminations).toEqual([]);
  expect(new NodeRemovals(boa.db).open().map((r) => r.nodeId)).toEqual([bNode.id]);
  // A new 4-GPU job: the target is 2 nodes again, exactly what exists.
  const c = job(4, { command: ['train'] });
  await tick(1);
  ex.releaseAll();
  await tick(4);
  const sizes = w.group.eksMock
    .commandCalls(UpdateNodegroupConfigCommand)
    .map((call) => call.args[0].input.scalingConfig?.desiredSize);
  expect(sizes.every((size) => (size ?? 0) <= 2)).toBe(true);
  expect(w.group.terminations).toEqual([]);
  expect(w.group.asg.live().map((i) => i.id)).toContain(bNode.id);
  expect(c.allocation).toHaveLength(4);
  expect(a.allocation).toHaveLength(4);
  expect(new NodeRemovals(boa.db).open()).toEqual([]);
  expect(new NodeRemovals(boa.db).all().map((r) => r.state)).toEqual(['cancelled']);
});
