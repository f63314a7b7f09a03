/**
 * The guard holds the node group to the budget at the GPUs its instances really have: a group changed
 * outside the stack to another instance type (its launch template, or the console) while the Lambda's
 * GPUS_PER_NODE still says the old one's. Counted at GPUS_PER_NODE, 4-GPU nodes read as 1-GPU ones and a
 * silent boa's group stayed at 4 times the budget's GPUs.
 */
import {
  CloudWatchClient,
  GetMetricStatisticsCommand,
  PutMetricDataCommand,
} from '@aws-sdk/client-cloudwatch';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { groupGpusPerNode, runGuard } from '../../infra/budget-guard/index.mjs';
import { instanceTypeGpus } from '../../infra/budget-guard.ts';
import { emulateNodegroup } from '../cloud/emulated-nodegroup.ts';
import { ManualClock } from '../service/harness.ts';

const NOW = new Date('2026-11-01T12:00:00Z');
// Configured for g4dn.xlarge (1 GPU a node) with a budget of 8 GPU-hours per hour: 8 such nodes.
const settings = {
  clusterName: 'boa',
  nodegroupName: 'gpu',
  gpusPerNode: 1,
  guardMinutes: 15,
  budget: 8,
  instanceGpus: instanceTypeGpus(),
};

/** boa silent (no heartbeat, no published budget); the group runs `desired` nodes of `instanceType`. */
function silentGroup(desired: number, instanceType: string, typeInLaunchTemplate = false) {
  const clock = new ManualClock();
  const group = emulateNodegroup({
    clock,
    minSize: 0,
    maxSize: 16,
    desiredSize: desired,
    instanceType,
    typeInLaunchTemplate,
  });
  const cloudwatch = new CloudWatchClient({ region: 'us-east-1' });
  mockClient(cloudwatch)
    .on(GetMetricStatisticsCommand)
    .resolves({ Datapoints: [] })
    .on(PutMetricDataCommand)
    .resolves({});
  return { group, clients: { eks: group.eks, cloudwatch, autoscaling: group.autoscaling } };
}

describe('budget guard: the group held at its instances’ real GPUs', () => {
  it('4-GPU instances while GPUS_PER_NODE says 1: lowered to the 2 nodes the budget pays for', async () => {
    const { group, clients } = silentGroup(4, 'g4dn.12xlarge');
    const result = await runGuard(clients, settings, NOW);
    expect(result).toMatchObject({ action: 'shrink', desiredSize: 2 });
    expect(group.group.desiredSize).toBe(2);
  });

  it('the type set by a launch template (DescribeNodegroup names none): read from the instances', async () => {
    const { group, clients } = silentGroup(4, 'g4dn.12xlarge', true);
    const result = await runGuard(clients, settings, NOW);
    expect(result).toMatchObject({ action: 'shrink', desiredSize: 2 });
    expect(group.group.desiredSize).toBe(2);
  });

  it('instances of the configured type: held to the budget as before, 8 nodes kept', async () => {
    const { group, clients } = silentGroup(8, 'g4dn.xlarge');
    const result = await runGuard(clients, settings, NOW);
    expect(result.action).toBe('none');
    expect(group.group.desiredSize).toBe(8);
  });

  it('GPUs per node: the most of the known types, else the configured count', () => {
    expect(groupGpusPerNode(settings, ['g4dn.xlarge'], ['g4dn.12xlarge', 'g4dn.xlarge'])).toBe(4);
    expect(groupGpusPerNode(settings, [], ['g4dn.metal'])).toBe(8);
    expect(groupGpusPerNode(settings, ['p9.unknown'], [undefined])).toBe(1);
    expect(groupGpusPerNode({ ...settings, gpusPerNode: 4 })).toBe(4);
  });
});
