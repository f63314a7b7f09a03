import {
  DescribeScalingActivitiesCommand,
  SetInstanceProtectionCommand,
  SuspendProcessesCommand,
  TerminateInstanceInAutoScalingGroupCommand,
} from '@aws-sdk/client-auto-scaling';
import { DescribeNodegroupCommand, UpdateNodegroupConfigCommand } from '@aws-sdk/client-eks';
import { describe, expect, it } from 'vitest';
import { CLUSTER, emulateNodegroup, NODEGROUP } from './emulated-nodegroup.ts';
import { fakeTime } from './fake-time.ts';

/** The emulator itself behaves as AWS documents, so the tests built on it can fail. */
function setup(desiredSize: number, extra: Partial<Parameters<typeof emulateNodegroup>[0]> = {}) {
  const time = fakeTime();
  const ng = emulateNodegroup({
    clock: time.clock,
    minSize: 0,
    maxSize: 10,
    desiredSize,
    updatePolls: 0,
    ...extra,
  });
  const resize = (desiredSize: number) =>
    ng.eks.send(
      new UpdateNodegroupConfigCommand({
        clusterName: CLUSTER,
        nodegroupName: NODEGROUP,
        scalingConfig: { desiredSize },
      }),
    );
  return { time, ng, resize };
}

describe('emulated node group: the ASG default termination policy', () => {
  it('balances zones when launching and takes from the zone with the most instances', async () => {
    const { ng, resize, time } = setup(3);
    expect(ng.instances.map((i) => i.zone)).toEqual(['us-east-1a', 'us-east-1b', 'us-east-1c']);
    time.advance(600_000);
    await resize(4); // the fourth goes to us-east-1a, which now has two
    const fourth = ng.instances[3];
    expect(fourth?.zone).toBe('us-east-1a');
    await resize(3);
    // us-east-1a has the most; of its two, the one closest to its next billing hour (the older) goes.
    expect(ng.instances.map((i) => i.id)).not.toContain(ng.asg.instances[0]?.id);
    expect(ng.instances).toContain(fourth);
  });

  it('removes instances of the oldest launch template first', async () => {
    const { ng, resize } = setup(3);
    ng.bumpLaunchTemplate();
    await resize(6);
    const newer = ng.instances.slice(3).map((i) => i.id);
    await resize(3);
    expect(ng.instances.map((i) => i.id)).toEqual(newer);
  });

  it('terminates the instance closest to its next billing hour among equals', async () => {
    const { ng, resize, time } = setup(0);
    await resize(3);
    time.advance(20 * 60_000);
    await resize(6); // 3 instances 20 min old and 3 new, one of each per zone
    time.advance(30 * 60_000); // the first three are 50 min into their hour: closest to the next
    await resize(3);
    expect(ng.instances.map((i) => i.id)).toEqual([
      'i-00000000000000004',
      'i-00000000000000005',
      'i-00000000000000006',
    ]);
  });

  it('honours scale-in protection: a protected instance stays, desired drops even if none can go', async () => {
    const { ng, resize } = setup(2);
    const [a, b] = ng.instances.map((i) => i.id);
    await ng.autoscaling.send(
      new SetInstanceProtectionCommand({
        AutoScalingGroupName: ng.asg.name,
        InstanceIds: [a!, b!],
        ProtectedFromScaleIn: true,
      }),
    );
    await resize(0);
    expect(ng.group.desiredSize).toBe(0);
    expect(ng.instances.map((i) => i.id)).toEqual([a, b]);
  });

  it('TerminateInstanceInAutoScalingGroup removes that instance and decrements; a second call is refused', async () => {
    const { ng } = setup(3);
    const victim = ng.instances[2]!.id;
    const send = () =>
      ng.autoscaling.send(
        new TerminateInstanceInAutoScalingGroupCommand({
          InstanceId: victim,
          ShouldDecrementDesiredCapacity: true,
        }),
      );
    await send();
    expect(ng.group.desiredSize).toBe(2);
    expect(ng.instances.map((i) => i.id)).not.toContain(victim);
    await expect(send()).rejects.toThrow(/Instance Id not found/);
    expect(ng.terminations).toHaveLength(1);
  });

  it('AZRebalance evens the zones a decrementing terminate left uneven: launches first, then drains one', async () => {
    const zones = ['us-east-1a', 'us-east-1b'];
    const run = async (suspend: boolean) => {
      const { ng } = setup(4, { zones, maxSize: 4 });
      if (suspend)
        await ng.autoscaling.send(
          new SuspendProcessesCommand({
            AutoScalingGroupName: ng.asg.name,
            ScalingProcesses: ['AZRebalance'],
          }),
        );
      for (const i of ng.instances.filter((i) => i.zone === 'us-east-1a'))
        await ng.autoscaling.send(
          new TerminateInstanceInAutoScalingGroupCommand({
            InstanceId: i.id,
            ShouldDecrementDesiredCapacity: true,
          }),
        );
      return ng;
    };
    const active = await run(false);
    expect(active.instances.map((i) => i.zone)).toEqual(['us-east-1b', 'us-east-1a']);
    expect(active.asg.rebalanceLaunches).toHaveLength(1);
    expect(active.asg.instances.filter((i) => i.terminatedBy === 'rebalance')).toHaveLength(1);
    const suspended = await run(true);
    expect(suspended.instances.map((i) => i.zone)).toEqual(['us-east-1b', 'us-east-1b']);
    expect(suspended.asg.rebalanceLaunches).toEqual([]);
  });

  it('shows launch failures in health.issues while the update itself succeeds', async () => {
    const { ng, resize } = setup(1);
    ng.setCapacity(2);
    await resize(4);
    expect(ng.instances).toHaveLength(2);
    const out = await ng.eks.send(
      new DescribeNodegroupCommand({ clusterName: CLUSTER, nodegroupName: NODEGROUP }),
    );
    expect(out.nodegroup?.scalingConfig?.desiredSize).toBe(4);
    expect(out.nodegroup?.status).toBe('DEGRADED');
    expect(out.nodegroup?.health?.issues?.[0]?.code).toBe('AsgInstanceLaunchFailures');
    expect(out.nodegroup?.health?.issues?.[0]?.message).toMatch(/InsufficientInstanceCapacity/);
    const activities = await ng.autoscaling.send(
      new DescribeScalingActivitiesCommand({ AutoScalingGroupName: ng.asg.name }),
    );
    expect(activities.Activities?.[0]?.StatusCode).toBe('Failed');
  });

  it('a node is Kubernetes-ready only some time after EC2 running', async () => {
    const { ng, resize, time } = setup(0, { bootMs: 60_000, registerMs: 30_000, kubeReadyMs: 90_000 });
    await resize(1);
    expect(await ng.kube.list()).toEqual([]);
    time.advance(60_000); // EC2 running
    expect(await ng.kube.list()).toEqual([]);
    time.advance(30_000); // registered, not Ready
    expect(await ng.kube.list()).toMatchObject([{ ready: false, gpus: 0, instanceId: ng.instances[0]?.id }]);
    time.advance(90_000);
    expect(await ng.kube.list()).toMatchObject([{ ready: true, gpus: 4, unschedulable: false }]);
  });
});

describe('emulated node group: an EKS version update (managed-node-update-behavior)', () => {
  const terminate = (ng: ReturnType<typeof setup>['ng'], id: string) =>
    ng.autoscaling.send(
      new TerminateInstanceInAutoScalingGroupCommand({
        InstanceId: id,
        ShouldDecrementDesiredCapacity: true,
      }),
    );

  it('surges, replaces the old instances, then decrements the sizes back to those before it', () => {
    const { ng } = setup(2, { maxSize: 4 });
    ng.startVersionUpdate(1);
    expect(ng.group).toMatchObject({ maxSize: 5, desiredSize: 3 });
    expect(ng.finishVersionUpdate()).toBe('Successful');
    expect(ng.group).toMatchObject({ maxSize: 4, desiredSize: 2 });
    expect(ng.asg.live().every((i) => i.templateVersion === ng.asg.templateVersion)).toBe(true);
  });

  it('never raises a desired size lowered during it (Cluster Autoscaler, boa), and gives the maximum back', async () => {
    const { ng } = setup(2, { maxSize: 4 });
    const old = ng.asg.live().map((i) => i.id);
    ng.startVersionUpdate(1);
    for (const id of old) await terminate(ng, id);
    expect(ng.finishVersionUpdate()).toBe('Successful');
    expect(ng.group).toMatchObject({ maxSize: 4, desiredSize: 1 });
    expect(ng.asg.live()).toHaveLength(1);
  });

  it('fails when old instances remain and every new one was terminated (nowhere to drain them to)', async () => {
    const { ng } = setup(2, { maxSize: 4 });
    ng.startVersionUpdate(1);
    const surge = ng.asg.live().find((i) => i.templateVersion === ng.asg.templateVersion)!;
    await terminate(ng, surge.id);
    expect(ng.finishVersionUpdate()).toBe('Failed');
    expect(ng.asg.live()).toHaveLength(2);
  });
});
