import { ResumeProcessesCommand } from '@aws-sdk/client-auto-scaling';
import { describe, expect, it } from 'vitest';
import { emulateNodegroup, poolOverEmulated } from './emulated-nodegroup.ts';
import { captureLogs, fakeTime } from './fake-time.ts';

/**
 * AZRebalance stays suspended on the node group's ASG, level-triggered: EKS suspends nothing, a new ASG
 * (the group replaced) starts with it active, and anyone can resume it by hand.
 */
function setup() {
  const time = fakeTime();
  const logs = captureLogs();
  const ng = emulateNodegroup({ clock: time.clock, minSize: 0, maxSize: 4, desiredSize: 2, updatePolls: 0 });
  const pool = poolOverEmulated(ng, time, logs.logger);
  const suspensions = () => logs.lines.filter((l) => l.event === 'nodegroup.az-rebalance-suspended');
  return { ng, pool, logs, suspensions };
}

describe('EksNodePool keeps AZRebalance suspended', () => {
  it('suspends it at the first listing, logs it once, and suspends it again after a resume by hand', async () => {
    const { ng, pool, suspensions } = setup();
    await pool.describe();
    await pool.listNodes();
    await pool.listNodes();
    expect(ng.asg.suspendedProcesses).toEqual(new Set(['AZRebalance']));
    expect(suspensions()).toHaveLength(1);
    await ng.autoscaling.send(
      new ResumeProcessesCommand({ AutoScalingGroupName: ng.asg.name, ScalingProcesses: ['AZRebalance'] }),
    );
    await pool.listNodes();
    expect(ng.asg.suspendedProcesses.has('AZRebalance')).toBe(true);
    expect(suspensions()).toHaveLength(2);
  });

  it('suspends it on the new ASG of a replaced node group', async () => {
    const { ng, pool, suspensions } = setup();
    await pool.describe();
    await pool.listNodes();
    ng.replace('gpu-2');
    await pool.describe();
    await pool.listNodes();
    expect(ng.asg.name).toMatch(/gpu-2/);
    expect(ng.asg.suspendedProcesses.has('AZRebalance')).toBe(true);
    expect(suspensions().map((l) => l.autoScalingGroup)).toEqual(['eks-gpu-uuid-1', ng.asg.name]);
  });

  it('checks it again right before terminating: resumed since the listing, suspended before the Terminate', async () => {
    const { ng, pool } = setup();
    await pool.describe();
    await pool.listNodes();
    await ng.autoscaling.send(new ResumeProcessesCommand({ AutoScalingGroupName: ng.asg.name }));
    const [first] = ng.instances.map((i) => i.id);
    const sentBefore = ng.asgMock.calls().length;
    expect(await pool.terminate([first!])).toEqual({ terminated: [first], alreadyGone: [] });
    const sent = ng.asgMock
      .calls()
      .slice(sentBefore)
      .map((c) => (c.args[0] as object).constructor.name);
    expect(sent.indexOf('SuspendProcessesCommand')).toBeGreaterThanOrEqual(0);
    expect(sent.indexOf('SuspendProcessesCommand')).toBeLessThan(
      sent.indexOf('TerminateInstanceInAutoScalingGroupCommand'),
    );
    expect(ng.asg.suspendedProcesses.has('AZRebalance')).toBe(true);
  });

  it('still terminates with decrement when it cannot suspend it, and says why (the budget first)', async () => {
    const { ng, pool, logs } = setup();
    await pool.describe();
    const refused = Object.assign(new Error('not authorized to perform: autoscaling:SuspendProcesses'), {
      name: 'AccessDenied',
      $fault: 'client',
      $metadata: { httpStatusCode: 403 },
    });
    ng.failNext('SuspendProcesses', [refused, refused]);
    const [first, second] = ng.instances.map((i) => i.id);
    // Found in review: blocked, an old stack's idle nodes were never removed, paid with no limit.
    expect(await pool.terminate([first!])).toEqual({ terminated: [first], alreadyGone: [] });
    expect(await pool.terminate([second!])).toEqual({ terminated: [second], alreadyGone: [] });
    expect(ng.group.desiredSize).toBe(0);
    const warned = logs.lines.filter((l) => l.event === 'nodegroup.az-rebalance-unsuspended');
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({ fix: 'redeploy the stack: autoscaling:SuspendProcesses' });
  });
});
