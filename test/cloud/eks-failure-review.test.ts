/**
 * A failure-mode review of the EKS node pool, as an SRE who has run Cluster Autoscaler and Karpenter on
 * EKS would attack it: EKS and Auto Scaling answering badly (in use, throttled past the retries, timeouts
 * whose change was applied), two writers, crashes between a call and its record, capacity that never
 * comes, nodes that never join, and the group changed by hand. Each attack states what boa must do,
 * worked out by hand, and asserts it over the emulated node group (emulated-nodegroup.ts).
 */
import { AutoScalingServiceException } from '@aws-sdk/client-auto-scaling';
import { DescribeUpdateCommand, ThrottlingException } from '@aws-sdk/client-eks';
import { afterEach, describe, expect, it } from 'vitest';
import { EksNodePool } from '../../src/cloud/aws/eks-node-pool.ts';
import { type NodesWorld, nodesWorld } from '../service/nodes-harness.ts';
import { CLUSTER, type EmulatedNodegroupOptions, emulateNodegroup, NODEGROUP } from './emulated-nodegroup.ts';
import { captureLogs, fakeTime } from './fake-time.ts';

const throttled = () => new ThrottlingException({ message: 'Rate exceeded', $metadata: {} });
const asgThrottled = () =>
  new AutoScalingServiceException({
    name: 'Throttling',
    $fault: 'client',
    $metadata: { httpStatusCode: 400 },
    message: 'Rate exceeded',
  });
const timeout = () => Object.assign(new Error('socket timed out'), { name: 'TimeoutError' });

/** An emulated node group and a pool over it (with Auto Scaling), waits on a fake clock. */
function group(options: Partial<Omit<EmulatedNodegroupOptions, 'clock'>> = {}) {
  const time = fakeTime();
  const logs = captureLogs();
  const ng = emulateNodegroup({ clock: time.clock, minSize: 0, maxSize: 6, desiredSize: 2, ...options });
  /** A pool over the group: a second one is another boa (a restart, or two replicas in a rollout). */
  const pool = () =>
    new EksNodePool(
      { clusterName: CLUSTER, nodegroupName: NODEGROUP, gpusPerNode: 4 },
      {
        eks: ng.eks,
        ec2: ng.ec2,
        autoscaling: ng.autoscaling,
        clock: time.clock,
        sleep: time.sleep,
        random: () => 0.5,
        logger: logs.logger,
      },
    );
  const sizesSent = () => ng.updateCalls().map((c) => c.args[0].input.scalingConfig?.desiredSize);
  return { time, logs, ng, pool, sizesSent };
}

describe('EKS update attacks (UpdateNodegroupConfig / DescribeUpdate)', () => {
  it('a crash after sending an update and before recording it: the restarted pool neither repeats it nor slips a second one past it', async () => {
    // Expected: boa A raises 2 -> 4 (update-1, InProgress for a long time: EKS sets the ASG's size at
    // once) and dies before recording it. boa B, new, same group: asked for 4 it finds the group at 4
    // and sends nothing; asked for 5, EKS refuses (ResourceInUse) 3 times within 15 s and B gives up,
    // the group left at 4; once EKS ends update-1, B's 5 goes, exactly one update more.
    const { ng, pool, sizesSent, time } = group({ updatePolls: 1_000_000 });
    await pool().setDesiredSize(4);
    const b = pool();
    expect(await b.setDesiredSize(4)).toEqual({ requested: 4 });
    const slept = time.sleeps.length;
    await expect(b.setDesiredSize(5)).rejects.toThrow(/still busy with another update after 3 attempts/);
    expect(time.sleeps.slice(slept).reduce((a, x) => a + x, 0)).toBeLessThanOrEqual(15_000);
    expect(ng.group.desiredSize).toBe(4);
    ng.updates.get('update-1')!.pollsLeft = 0;
    ng.setUpdatePolls(0);
    expect(await b.setDesiredSize(5)).toMatchObject({ requested: 5, updateId: 'update-2' });
    expect(sizesSent()).toEqual([4, 5, 5, 5, 5]);
    expect(ng.updates.size).toBe(2);
    expect(ng.group.desiredSize).toBe(5);
  });

  it('a timeout whose update EKS applied, then throttling past the retries: applied once, the next ask sends nothing twice', async () => {
    // Expected: the first UpdateNodegroupConfig is applied and its answer lost; the 4 retries (same
    // idempotency token) are throttled; the resize fails after 5 attempts. EKS holds one update and the
    // group 4. Asked for 4 again, the pool finds 4 and sends nothing.
    const { ng, pool, sizesSent } = group({ updatePolls: 0 });
    ng.failNext('UpdateNodegroupConfig', [timeout()], { afterApply: true });
    ng.failNext('UpdateNodegroupConfig', Array.from({ length: 4 }, throttled));
    const p = pool();
    await expect(p.setDesiredSize(4)).rejects.toThrow(/gave up after 5 attempts/);
    expect(ng.updates.size).toBe(1);
    expect(ng.group.desiredSize).toBe(4);
    const tokens = new Set(ng.updateCalls().map((c) => c.args[0].input.clientRequestToken));
    expect(tokens.size).toBe(1);
    expect(await p.setDesiredSize(4)).toEqual({ requested: 4 });
    expect(sizesSent()).toHaveLength(5);
  });

  it('two boas resizing at once (a rollout): the second never lowers what the first raised, nor passes maxSize', async () => {
    // Expected: A asks 2 -> 9 (clamped to maxSize 6), B 2 -> 4 at the same moment. One of them gets
    // the group first; the other is refused ResourceInUse, re-reads the group, and does not send a
    // raise that is now a lowering (its nodes are unprotected): the group ends at 6, never above it.
    const { ng, pool } = group({ updatePolls: 2 });
    const [a, b] = [pool(), pool()];
    const results = await Promise.allSettled([a.setDesiredSize(9), b.setDesiredSize(4)]);
    expect(results[0]).toMatchObject({ status: 'fulfilled', value: { requested: 6 } });
    expect(results[1]).toMatchObject({ status: 'rejected' });
    expect((results[1] as PromiseRejectedResult).reason.message).toMatch(/a lowering is not sent/);
    expect(ng.group.desiredSize).toBe(6);
    expect(Math.max(...ng.updateCalls().map((c) => c.args[0].input.scalingConfig!.desiredSize!))).toBe(6);
  });

  it('describe() still reports the group when its scaling activities cannot be read (Auto Scaling throttled past the retries)', async () => {
    // Expected: the launch failures are a secondary read; the group's bounds and desired size (what every
    // node pass needs) come from DescribeNodegroup, which answers. Unreadable, launchFailures is empty
    // and that is logged once; the read after recovers. Before, describe() threw: a tick kept the last
    // group it had (none at all after a start), so no pass resized or removed anything while Auto
    // Scaling's Describe calls (an account-wide quota Cluster Autoscaler shares) were throttled.
    const { ng, pool, logs } = group({ maxSize: 4 });
    ng.setCapacity(2);
    const p = pool();
    await p.setDesiredSize(3); // one launch fails for capacity
    ng.failNext('DescribeScalingActivities', Array.from({ length: 10 }, asgThrottled));
    const blind = await p.describe();
    expect(blind).toMatchObject({ minSize: 0, maxSize: 4, desiredSize: 3, launchFailures: [] });
    await p.describe();
    expect(logs.lines.filter((l) => l.event === 'nodes.launch-failures-unreadable')).toHaveLength(1);
    ng.clearFailures('DescribeScalingActivities');
    const seen = await p.describe();
    expect(seen.launchFailures?.[0]?.message).toMatch(/InsufficientInstanceCapacity/);
  });

  it("describe() still reports the group while boa's own update cannot be read (DescribeUpdate throttled past the retries), as in flight", async () => {
    // Expected: the update's state is unknown, so it counts as still running: nothing else is sent
    // (EKS would refuse it anyway) and the group's size and bounds are reported. Once DescribeUpdate
    // answers again the update settles as usual.
    const { ng, pool, sizesSent, logs } = group({ updatePolls: 1_000_000 });
    const p = pool();
    expect(await p.setDesiredSize(4)).toMatchObject({ updateId: 'update-1' });
    ng.failNext('DescribeUpdate', Array.from({ length: 100 }, throttled));
    expect(await p.describe()).toMatchObject({ desiredSize: 4, updateInFlight: 'update-1' });
    await expect(p.setDesiredSize(5)).rejects.toThrow(/update-1/);
    expect(sizesSent()).toEqual([4]);
    expect(logs.lines.filter((l) => l.event === 'update.unreadable').length).toBeGreaterThan(0);
    ng.clearFailures('DescribeUpdate');
    ng.updates.get('update-1')!.pollsLeft = 0;
    expect((await p.describe()).updateInFlight).toBeUndefined();
    expect(await p.setDesiredSize(5)).toMatchObject({ requested: 5 });
    expect(ng.eksMock.commandCalls(DescribeUpdateCommand).length).toBeGreaterThan(10);
  });
});

const worlds: NodesWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.cleanup();
});
/** boa over the emulated group (test/service/nodes-harness.ts), the pool's waits not waited. */
function world(options: Parameters<typeof nodesWorld>[0] = {}) {
  const w = nodesWorld({ sleep: async () => undefined, ...options });
  worlds.push(w);
  return w;
}

describe('boa over a group whose Auto Scaling reads fail', () => {
  it('started while the scaling activities cannot be read, boa still sizes the group for its jobs', async () => {
    // Expected: a job of 4 GPUs wants one node: boa raises the group 0 -> 1 within its first tick, and
    // the node joins and takes the job. The failed reads cost the capacity backoff's input (and the
    // unseen-launch charges, logged), not the group. Before the fix: describe() threw every tick, the
    // tick had no group, no pass ran and the job waited for as long as the reads failed.
    const w = world();
    w.group.failNext('DescribeScalingActivities', Array.from({ length: 10_000 }, asgThrottled));
    const { tick, job } = await w.start();
    const a = job(4);
    await tick(3);
    expect(w.group.group.desiredSize).toBe(1);
    expect(a.allocation).toHaveLength(4);
  });
});
