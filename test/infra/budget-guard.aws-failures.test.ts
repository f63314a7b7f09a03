/**
 * The guard's Auto Scaling calls (reading the group's instances, lifting boa's scale-in protection)
 * help the lowered desired size take effect; when one fails (throttling past the SDK's retries,
 * AccessDenied, a timeout), the guard still lowers the desired size, the one change that bounds what
 * is paid, and then fails the run for its error alarm. Before, the failure was thrown before the
 * desired size was touched: every run did nothing while it lasted, the group paid at boa's last size.
 * So does a run that cannot bring the group within the budget because its minimum is above it.
 */
import { DescribeAutoScalingGroupsCommand, SetInstanceProtectionCommand } from '@aws-sdk/client-auto-scaling';
import {
  CloudWatchClient,
  GetMetricStatisticsCommand,
  PutMetricDataCommand,
} from '@aws-sdk/client-cloudwatch';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { runGuard } from '../../infra/budget-guard/index.mjs';
import { emulateNodegroup } from '../cloud/emulated-nodegroup.ts';
import { ManualClock } from '../service/harness.ts';

const settings = { clusterName: 'boa', nodegroupName: 'gpu', gpusPerNode: 4, guardMinutes: 15, budget: 8 };
const NOW = new Date('2026-11-01T12:00:00Z');

/** boa silent (no heartbeat, no published budget), its group at 6 nodes with 5 of them protected. */
function silentGroupWithProtectedNodes() {
  const clock = new ManualClock();
  const group = emulateNodegroup({ clock, minSize: 0, maxSize: 16, desiredSize: 6 });
  group.asg.setProtection(
    group.asg
      .live()
      .map((i) => i.id)
      .slice(0, 5),
    true,
  );
  const cloudwatch = new CloudWatchClient({ region: 'us-east-1' });
  const cwMock = mockClient(cloudwatch);
  cwMock.on(GetMetricStatisticsCommand).resolves({ Datapoints: [] }).on(PutMetricDataCommand).resolves({});
  const clients = { eks: group.eks, cloudwatch, autoscaling: group.autoscaling };
  const tripped = () =>
    cwMock.commandCalls(PutMetricDataCommand).map((c) => c.args[0].input.MetricData?.[0]?.Value);
  return { group, clients, tripped };
}

const throttled = () =>
  Object.assign(new Error('Rate exceeded'), { name: 'Throttling', $metadata: { httpStatusCode: 400 } });

describe('budget guard when an Auto Scaling call fails', () => {
  it('lowers the desired size to what the budget allows when the protection cannot be lifted, then fails the run', async () => {
    const { group, clients, tripped } = silentGroupWithProtectedNodes();
    group.asgMock.on(SetInstanceProtectionCommand).rejects(throttled());

    await expect(runGuard(clients, settings, NOW, { sleep: async () => {} })).rejects.toThrow(
      /Rate exceeded/,
    );
    // floor(8 / 4) = 2 nodes: lowered although the protection stays.
    expect(group.group.desiredSize).toBe(2);
    expect(group.updateCalls().map((c) => c.args[0].input.scalingConfig)).toEqual([{ desiredSize: 2 }]);
    // It holds the group, and says so.
    expect(tripped()).toEqual([1]);
  });

  it('lowers the desired size when the group cannot be read, then fails the run', async () => {
    const { group, clients, tripped } = silentGroupWithProtectedNodes();
    group.asgMock.on(DescribeAutoScalingGroupsCommand).rejects(throttled());

    await expect(runGuard(clients, settings, NOW, { sleep: async () => {} })).rejects.toThrow(
      /Rate exceeded/,
    );
    expect(group.group.desiredSize).toBe(2);
    expect(tripped()).toEqual([1]);
  });

  it('still fails the run with what refused it when nothing could be lowered', async () => {
    const { group, clients } = silentGroupWithProtectedNodes();
    // Already within the budget by its desired size, above it by its protected instances.
    group.setDesiredOutside(2);
    group.asgMock.on(SetInstanceProtectionCommand).rejects(
      Object.assign(new Error('User is not authorized to perform: autoscaling:SetInstanceProtection'), {
        name: 'AccessDenied',
      }),
    );
    await expect(runGuard(clients, settings, NOW, { sleep: async () => {} })).rejects.toThrow(
      /not authorized/,
    );
    expect(group.updateCalls()).toHaveLength(0);
    expect(group.group.desiredSize).toBe(2);
  });

  it('holds a group whose minimum is above the budget at that minimum, then fails the run naming the fix', async () => {
    const clock = new ManualClock();
    // Budget 8 GPUs, 4 per node: 2 nodes; someone set the minimum to 3 (the stack sets 0).
    const group = emulateNodegroup({ clock, minSize: 3, maxSize: 16, desiredSize: 6 });
    const cloudwatch = new CloudWatchClient({ region: 'us-east-1' });
    mockClient(cloudwatch)
      .on(GetMetricStatisticsCommand)
      .resolves({ Datapoints: [] })
      .on(PutMetricDataCommand)
      .resolves({});
    const clients = { eks: group.eks, cloudwatch, autoscaling: group.autoscaling };

    await expect(runGuard(clients, settings, NOW, { sleep: async () => {} })).rejects.toThrow(
      'node group boa/gpu: its minimum size 3 is above the 2 nodes the budget allows (8 GPU-hours per hour)',
    );
    // As low as it may go without touching the bounds.
    expect(group.group.desiredSize).toBe(3);
  });
});
