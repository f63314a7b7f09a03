/**
 * TerminateInstanceInAutoScalingGroup lowers the desired size by one: sent twice for one removal, the
 * group would lose one more instance, of its own choosing (a busy one, say). Whatever happens around
 * the call, it goes out once.
 */
import { TerminateInstanceInAutoScalingGroupCommand } from '@aws-sdk/client-auto-scaling';
import { afterEach, describe, expect, it } from 'vitest';
import { NodeRemovals } from '../../../src/store/node-removals.ts';
import { type NodesWorld, nodesWorld } from '../nodes-harness.ts';
import { awsError, busyNodes } from './busy-nodes.ts';
import { terminatingWait } from './terminating-wait.ts';

const worlds: NodesWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.cleanup();
});

const terminateCalls = (w: NodesWorld) =>
  w.group.asgMock
    .commandCalls(TerminateInstanceInAutoScalingGroupCommand)
    .map((call) => call.args[0].input.InstanceId);

describe('a node removal sends its Terminate once', () => {
  it('after a kill -9 that followed the call, with the instance still in Terminating:Wait', async () => {
    const w = nodesWorld({ onDisk: true });
    worlds.push(w);
    // The group keeps the instance listed while EKS drains it (EC2 still running), and this first
    // service dies right after its Terminate went out, before it was recorded.
    const aws = terminatingWait(w, 300_000);
    const first = await w.start((pool) => aws.wrap(pool, true));
    first.job(4);
    const b = first.job(4);
    await first.tick(3);
    first.boa.service.finishJob(b.id, 'done');
    await first.tick(1);
    const [gone] = terminateCalls(w);
    expect(new NodeRemovals(first.boa.db).open()).toMatchObject([{ nodeId: gone, state: 'terminating' }]);
    await first.boa.close();
    // Restarted while the instance is still listed, Terminating:Wait.
    const second = await w.start((pool) => aws.wrap(pool));
    await second.tick(2);
    expect(terminateCalls(w)).toEqual([gone]);
    expect(new NodeRemovals(second.boa.db).all()).toMatchObject([
      { nodeId: gone, state: 'terminated', outcome: 'already-gone' },
    ]);
    expect(w.group.group.desiredSize).toBe(1);
  });

  it('without the right to read the lifecycle (a stack not redeployed since), still sent, once, and said', async () => {
    const { w, tick, boa, jobs } = await busyNodes(worlds, 2);
    const b = jobs[1]!;
    const denied = awsError(
      'AccessDenied',
      'not authorized to perform autoscaling:DescribeAutoScalingInstances',
      403,
    );
    w.group.failNext('DescribeAutoScalingInstances', [denied, denied, denied]);
    boa.service.finishJob(b.id, 'done');
    await tick(2);
    expect(terminateCalls(w)).toHaveLength(1);
    expect(w.group.group.desiredSize).toBe(1);
    expect(w.logs.lines.some((l) => l.event === 'node.lifecycle-unreadable')).toBe(true);
  });

  it('when its answer is lost (a timeout) after AWS applied it: the retry reads the instance first', async () => {
    const { w, tick, boa, jobs } = await busyNodes(worlds, 2);
    const b = jobs[1]!;
    const timeout = Object.assign(new Error('socket timed out'), { name: 'TimeoutError', $metadata: {} });
    w.group.failNext('TerminateInstanceInAutoScalingGroup', [timeout], { afterApply: true });
    boa.service.finishJob(b.id, 'done');
    await tick(2);
    expect(terminateCalls(w)).toHaveLength(1);
    // Its own call did it: recorded as sent, counted, and the group one smaller, not two.
    expect(new NodeRemovals(boa.db).all()).toMatchObject([{ state: 'terminated', outcome: 'sent' }]);
    expect(w.group.group.desiredSize).toBe(1);
    expect(w.logs.lines.filter((l) => l.event === 'nodes.drift')).toEqual([]);
  });
});
