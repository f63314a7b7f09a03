/**
 * The guard during a node group's replacement (an instance-type change): CloudFormation points it at the
 * new group and deletes the old one only at the end of the update (or never, when that cleanup fails).
 * The old group's running nodes are paid too, so the new group gets what the budget leaves beside their
 * GPUs; another stack's group and a group not boa's are not counted.
 */
import {
  CloudWatchClient,
  GetMetricStatisticsCommand,
  PutMetricDataCommand,
} from '@aws-sdk/client-cloudwatch';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { readSettings, runGuard } from '../../infra/budget-guard/index.mjs';
import { instanceTypeGpus } from '../../infra/budget-guard.ts';
import { knownInstanceTypes } from '../../src/core/instance-types.ts';
import { emulateNodegroup, ROLE_LABEL, STACK_TAGS } from '../cloud/emulated-nodegroup.ts';
import { ManualClock } from '../service/harness.ts';
import { synthTemplate } from './synth.ts';

// 8 GPU-hours per hour: 2 nodes of 4 GPUs.
const settings = { clusterName: 'boa', nodegroupName: 'gpu-v2', gpusPerNode: 4, guardMinutes: 15, budget: 8 };
const NOW = new Date('2026-11-01T12:00:00Z');

/**
 * boa silent; the old group gpu still runs 2 nodes; the new gpu-v2 (of `instanceType`, the old one's
 * unless given) was raised to `newDesired` before boa fell silent.
 */
function silentDuringReplacement(newDesired = 2, instanceType?: string) {
  const clock = new ManualClock();
  const group = emulateNodegroup({ clock, minSize: 0, maxSize: 16, desiredSize: 2 });
  group.replace('gpu-v2', { keepOld: true, ...(instanceType ? { instanceType } : {}) });
  group.setDesiredOutside(newDesired);
  const cloudwatch = new CloudWatchClient({ region: 'us-east-1' });
  const cwMock = mockClient(cloudwatch);
  cwMock.on(GetMetricStatisticsCommand).resolves({ Datapoints: [] }).on(PutMetricDataCommand).resolves({});
  return { group, clients: { eks: group.eks, cloudwatch, autoscaling: group.autoscaling } };
}

describe('budget guard while a replaced node group still runs', () => {
  it("counts the old group's running nodes: the new group is held to what the budget allows beside them", async () => {
    const { group, clients } = silentDuringReplacement();
    const result = await runGuard(clients, settings, NOW);
    expect(result).toMatchObject({
      action: 'shrink',
      desiredSize: 0,
      replacedGroups: ['gpu'],
      replacedRunning: 2,
    });
    expect(group.group.desiredSize).toBe(0);
  });

  it("CloudFormation's cleanup under way: the old nodes, draining in Terminating:Wait, are still counted", async () => {
    const { group, clients } = silentDuringReplacement();
    const old = group.running.map((i) => i.id);
    // EKS deletes the old group: DELETING, each node held by its lifecycle hook while it drains.
    group.deleteReplaced({ drainMs: 10 * 60_000 });
    const billed = group.running.filter((i) => old.includes(i.id));
    expect(billed, 'EC2 still runs (bills) the old nodes while they drain').toHaveLength(2);
    const result = await runGuard(clients, settings, NOW);
    expect(result).toMatchObject({
      action: 'shrink',
      desiredSize: 0,
      replacedGroups: ['gpu'],
      replacedRunning: 2,
      replacedGpus: 8,
    });
    expect(group.group.desiredSize).toBe(0);
  });

  it("does not count another stack's group or a group not boa's", async () => {
    const { group, clients } = silentDuringReplacement();
    group.deleteReplaced();
    group.addGroup('other-stack-gpu', {
      labels: ROLE_LABEL,
      tags: { ...STACK_TAGS, 'boa:cluster': 'other' },
      instances: 2,
    });
    group.addGroup('not-boa-gpu', { labels: ROLE_LABEL, tags: {}, instances: 2 });
    group.addGroup('system', { labels: { 'boa/node-role': 'system' }, tags: STACK_TAGS, instances: 2 });
    const result = await runGuard(clients, settings, NOW);
    expect(result).toMatchObject({ action: 'none', silent: true });
    expect(result).not.toHaveProperty('replacedGroups');
    expect(group.group.desiredSize).toBe(2);
  });
});

describe('budget guard while a replaced group of another instance type still runs', () => {
  // 16 GPU-hours per hour; the old group runs two 4-GPU g4dn.12xlarge nodes (8 GPUs), the new group is
  // of 1-GPU g4dn.xlarge nodes and was raised to 12 before boa fell silent: 20 GPUs paid.
  const oneGpu = { ...settings, gpusPerNode: 1, budget: 16, instanceGpus: instanceTypeGpus() };

  const silentAfterTypeChange = () => silentDuringReplacement(12, 'g4dn.xlarge');

  it("counts the old nodes at their own 4 GPUs: the new group is held to the budget's 8 GPUs left", async () => {
    const { group, clients } = silentAfterTypeChange();
    const result = await runGuard(clients, oneGpu, NOW);
    // Counted as 2 of 16 nodes, they left 14 to the new group, and the guard held nothing: 20 GPUs paid.
    expect(result).toMatchObject({
      action: 'shrink',
      desiredSize: 8,
      replacedGroups: ['gpu'],
      replacedRunning: 2,
      replacedGpus: 8,
    });
    expect(group.group.desiredSize).toBe(8);
  });

  it('a type the guard does not know counts at the guarded group’s GPUs per node', async () => {
    const { group, clients } = silentAfterTypeChange();
    const result = await runGuard(clients, { ...oneGpu, instanceGpus: {} }, NOW);
    expect(result).toMatchObject({ action: 'none', replacedRunning: 2, replacedGpus: 2 });
    expect(group.group.desiredSize).toBe(12);
  });
});

describe('budget guard in the CDK app, on a replacement', () => {
  it('hands the Lambda the GPUs of the instance types boa knows, which its settings read', () => {
    const template = synthTemplate({ allowedApiCidrs: '203.0.113.0/24', budget: 40 });
    const [guard] = Object.values(template.findResources('AWS::Lambda::Function')).filter((f: any) =>
      String(f.Properties.Description).startsWith('Budget guard'),
    ) as any[];
    const env = guard.Properties.Environment.Variables;
    const read = readSettings(env);
    expect(read.instanceGpus).toMatchObject({ 'g4dn.12xlarge': 4, 'g4dn.xlarge': 1, 'g5.48xlarge': 8 });
    expect(Object.keys(read.instanceGpus!)).toHaveLength(knownInstanceTypes().length);
  }, 300_000);

  it("may list the cluster's node groups and read them, and change none but the guarded one", () => {
    const template = synthTemplate({ allowedApiCidrs: '203.0.113.0/24', budget: 40 });
    const guard = Object.values(template.findResources('AWS::IAM::Policy')).filter((p: any) =>
      JSON.stringify(p.Properties.Roles).includes('BudgetGuardHandlerServiceRole'),
    );
    const statements = guard.flatMap((p: any) => p.Properties.PolicyDocument.Statement as any[]);
    const list = statements.find((st) => st.Action === 'eks:ListNodegroups');
    expect(JSON.stringify(list.Resource)).toMatch(/EksCluster.*Arn/);
    const read = statements.find(
      (st) => st.Action === 'eks:DescribeNodegroup' && JSON.stringify(st.Resource).includes(':nodegroup/'),
    );
    expect(JSON.stringify(read.Resource)).toContain('/*/*');
    const update = statements.filter((st) => [st.Action].flat().includes('eks:UpdateNodegroupConfig'));
    expect(update).toHaveLength(1);
    expect(JSON.stringify(update[0].Resource)).toMatch(/EksClusterNodegroupGpu.*"Arn"/);
  }, 300_000);
});
