/**
 * A node removal whose step fails (a refusal for that one instance, a fault not retried) holds up
 * neither the other removals nor the rest of the pass, and boa's own terminations are never taken for
 * a change from outside.
 */
import { TerminateInstanceInAutoScalingGroupCommand } from '@aws-sdk/client-auto-scaling';
import { afterEach, describe, expect, it } from 'vitest';
import type { NodesWorld } from '../nodes-harness.ts';
import { awsError, busyNodes } from './busy-nodes.ts';

const worlds: NodesWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.cleanup();
});

/** Every Terminate refused, as when an instance lost the tag boa's IAM condition needs. */
const refusedTerminates = (count: number) =>
  Array.from({ length: count }, () =>
    awsError('AccessDenied', 'not authorized to TerminateInstanceInAutoScalingGroup'),
  );

describe('a node removal that fails', () => {
  it('holds up no scale-out: a job that needs a new node gets it while one removal keeps failing', async () => {
    const { w, tick, job, boa, jobs } = await busyNodes(worlds, 2);
    const b = jobs[1]!;
    w.group.failNext('TerminateInstanceInAutoScalingGroup', refusedTerminates(50));
    boa.service.finishJob(b.id, 'done');
    await tick(1); // b's node chosen, cordoned, its Terminate refused
    const c = job(4);
    await tick(10);
    // target 2 + the node still being removed: the pass got to its resize, and the job runs.
    expect(w.group.group.desiredSize).toBe(3);
    expect(c.allocation).toHaveLength(4);
    expect(w.logs.lines.filter((l) => l.event === 'nodes.failed')).toEqual([]);
    expect(w.logs.lines.some((l) => l.event === 'node.remove-failed')).toBe(true);
  });

  it('holds up no other removal: each idle node is tried', async () => {
    const { w, tick, boa, jobs } = await busyNodes(worlds, 3);
    const [, b, c] = jobs as [unknown, { id: number }, { id: number }];
    // Every Terminate refused: each removal is still tried at every pass, not only the first.
    w.group.failNext('TerminateInstanceInAutoScalingGroup', refusedTerminates(50));
    boa.service.finishJob(b.id, 'done');
    boa.service.finishJob(c.id, 'done');
    await tick(4);
    const tried = new Set(
      w.group.asgMock
        .commandCalls(TerminateInstanceInAutoScalingGroupCommand)
        .map((call) => call.args[0].input.InstanceId),
    );
    expect(tried.size).toBe(2);
  });

  it("takes none of boa's own terminations for drift when a later step of the same pass fails", async () => {
    const { w, tick, boa, jobs } = await busyNodes(worlds, 3);
    const [, b, c] = jobs as [unknown, { id: number }, { id: number }];
    // The first Terminate goes through, the second is refused once (not retried).
    w.group.failNext('TerminateInstanceInAutoScalingGroup', [
      undefined,
      awsError('ScalingActivityInProgressFault', 'Scaling activities in progress'),
    ]);
    boa.service.finishJob(b.id, 'done');
    boa.service.finishJob(c.id, 'done');
    await tick(3);
    expect(w.logs.lines.filter((l) => l.event === 'nodes.drift')).toEqual([]);
    expect(w.group.group.desiredSize).toBe(1);
  });
});
