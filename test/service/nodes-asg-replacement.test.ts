import { AutoScalingServiceException } from '@aws-sdk/client-auto-scaling';
import { UpdateNodegroupConfigCommand } from '@aws-sdk/client-eks';
import { afterEach, describe, expect, it } from 'vitest';
import { nodeName, type NodesWorld, nodesWorld } from './nodes-harness.ts';

/**
 * The ASG replaces an instance on its own (a failed EC2 health check, AZ rebalancing): the desired
 * capacity stays, a replacement launches, and EKS's lifecycle hook holds the old one in Terminating:Wait,
 * EC2 running and paid, for minutes while its Node drains.
 */
const worlds: NodesWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.cleanup();
});

const HOOK_MS = 15 * 60_000;

describe('an instance the ASG replaces on its own', () => {
  it('is leaving, not kept: boa neither removes the replacement nor places anything on it, and pays it until gone', async () => {
    const w = nodesWorld();
    worlds.push(w);
    const { tick, job, boa, status } = await w.start();
    const a = job(4);
    const b = job(4);
    await tick(3); // two nodes, Ready, one job each
    expect(w.group.asg.live()).toHaveLength(2);
    const old = w.group.asg.instances.find((i) => nodeName(w.group, i.id) === a.allocation[0])!;
    const before = new Set(w.group.asg.live().map((i) => i.id));

    w.group.asg.replaceInstance(old.id, HOOK_MS);
    await tick(1);
    const listed = await boa.pool.listNodes();
    expect(listed.find((n) => n.id === old.id)).toMatchObject({ leaving: true, ready: false, billed: true });
    expect((await status()).nodeGroup.notReady).toMatchObject({ leaving: 1 });

    await tick(6); // the replacement boots and is Ready; the hook still holds the old one
    expect(w.group.asg.ec2State(old, 60_000)).toBe('running');
    // boa removed nothing and sent no size: the group already holds what the jobs need.
    expect(w.group.terminations).toEqual([]);
    expect(w.group.group.desiredSize).toBe(2);
    const sizes = w.group.eksMock
      .commandCalls(UpdateNodegroupConfigCommand)
      .map((c) => c.args[0].input.scalingConfig?.desiredSize);
    expect(sizes).toEqual([2]);
    // The job moved to the replacement; nothing runs on the leaving node.
    const replacement = w.group.asg.live().find((i) => !before.has(i.id))!;
    expect(a.allocation).toEqual(Array(4).fill(nodeName(w.group, replacement.id)));
    expect(b.allocation).not.toContain(nodeName(w.group, old.id));

    await tick(12); // the hook ends, EC2 shuts it down and it is gone
    const row = boa.db.$client
      .prepare('select launched_at as launchedAt, gone_at as goneAt from ledger_nodes where id = ?')
      .get(old.id) as { launchedAt: number; goneAt: number | null };
    expect(row.goneAt).not.toBeNull();
    expect(row.goneAt!).toBeGreaterThanOrEqual(old.hookUntil!);
    expect(w.group.terminations).toEqual([]);
    expect(w.group.group.desiredSize).toBe(2);
  });

  it('unreadable lifecycle states (a stack not redeployed) leave the listing as it was, logged once', async () => {
    const w = nodesWorld();
    worlds.push(w);
    const denied = () =>
      new AutoScalingServiceException({
        name: 'AccessDenied',
        $fault: 'client',
        $metadata: { httpStatusCode: 403 },
        message: 'not authorized to perform: autoscaling:DescribeAutoScalingGroups',
      });
    w.group.failNext('DescribeAutoScalingGroups', Array.from({ length: 4 }, denied));
    const { tick, job, boa } = await w.start();
    const a = job(4);
    await tick(3);
    expect(a.allocation).toHaveLength(4);
    expect(boa.repo.ledger.ledgerTotals(0, w.clock.now()).paidGpuMs).toBeGreaterThan(0);
    const unreadable = w.logs.lines.filter((l) => l.event === 'node.lifecycle-unreadable');
    expect(unreadable).toHaveLength(1);
    expect(unreadable[0]).toMatchObject({ fix: expect.stringContaining('DescribeAutoScalingGroups') });
    await tick(3); // readable again
    expect(w.logs.events()).toContain('node.lifecycle-read');
  });
});
