import {
  CloudWatch,
  CloudWatchClient,
  GetMetricStatisticsCommand,
  PutMetricDataCommand,
} from '@aws-sdk/client-cloudwatch';
import { SetInstanceProtectionCommand } from '@aws-sdk/client-auto-scaling';
import { DescribeNodegroupCommand, EKS, UpdateNodegroupConfigCommand } from '@aws-sdk/client-eks';
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as sns from 'aws-cdk-lib/aws-sns';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { BudgetGuard } from '../../infra/budget-guard.ts';
import { allowedNodes, decide, periodFor, readSettings, runGuard } from '../../infra/budget-guard/index.mjs';
import { emulateNodegroup } from '../cloud/emulated-nodegroup.ts';
import { ManualClock } from '../service/harness.ts';
import { kubernetesObjects, synthTemplate } from './synth.ts';

const settings = { clusterName: 'boa', nodegroupName: 'gpu', gpusPerNode: 4, guardMinutes: 15, budget: 40 };
const NOW = new Date('2026-11-01T12:00:00Z');
const CIDRS = { allowedApiCidrs: '203.0.113.0/24' };

function world(options: { heartbeats: number; publishedBudget?: number; desiredSize: number }) {
  const eks = new EKS({ region: 'us-east-1' });
  const cloudwatch = new CloudWatch({ region: 'us-east-1' });
  const eksMock = mockClient(eks);
  const cwMock = mockClient(cloudwatch);
  eksMock.on(DescribeNodegroupCommand).resolves({
    nodegroup: {
      scalingConfig: { minSize: 0, maxSize: 64, desiredSize: options.desiredSize },
      resources: { autoScalingGroups: [{ name: 'eks-gpu-1234' }] },
    },
  });
  eksMock.on(UpdateNodegroupConfigCommand).resolves({ update: { id: 'u1' } });
  cwMock
    .on(GetMetricStatisticsCommand, { MetricName: 'Heartbeat' })
    .resolves({
      Datapoints: options.heartbeats > 0 ? [{ Timestamp: NOW, SampleCount: options.heartbeats }] : [],
    })
    .on(GetMetricStatisticsCommand, { MetricName: 'BudgetGpuHoursPerHour' })
    .resolves({
      Datapoints:
        options.publishedBudget === undefined ? [] : [{ Timestamp: NOW, Minimum: options.publishedBudget }],
    });
  cwMock.on(PutMetricDataCommand).resolves({});
  return { clients: { eks, cloudwatch }, eksMock, cwMock };
}

describe('budget guard logic', () => {
  it('allows floor(budget / GPUs per node) nodes, never below the group minimum', () => {
    expect(allowedNodes(40, 4)).toBe(10);
    expect(allowedNodes(42, 4)).toBe(10);
    expect(allowedNodes(2, 4, 1)).toBe(1);
    expect(decide({ heartbeats: 3, budget: 40, gpusPerNode: 4, scaling: { desiredSize: 64 } }).action).toBe(
      'none',
    );
    expect(decide({ heartbeats: 0, budget: 40, gpusPerNode: 4, scaling: { desiredSize: 8 } })).toMatchObject({
      action: 'none',
      silent: true,
    });
  });

  it('refuses settings it cannot act on, naming them', () => {
    expect(() => readSettings({ CLUSTER_NAME: 'boa', NODEGROUP_NAME: 'gpu', GPUS_PER_NODE: 'x' })).toThrow(
      /GPUS_PER_NODE/,
    );
    expect(() => readSettings({ NODEGROUP_NAME: 'gpu', GPUS_PER_NODE: '4' })).toThrow(/CLUSTER_NAME/);
    // A replaced group's GPUs are summed from these: a string would be concatenated, 0 count nothing.
    const base = { CLUSTER_NAME: 'boa', NODEGROUP_NAME: 'gpu', GPUS_PER_NODE: '4' };
    for (const bad of ['{"g5.xlarge":"1"}', '{"g5.xlarge":0}', '[1]', 'g5.xlarge=1', '{"g5.xlarge":1.5}']) {
      expect(() => readSettings({ ...base, INSTANCE_TYPE_GPUS: bad }), bad).toThrow(
        /INSTANCE_TYPE_GPUS must be a JSON object of instance types to whole GPU counts/,
      );
    }
    expect(readSettings({ ...base, INSTANCE_TYPE_GPUS: '{"g5.xlarge":1}' }).instanceGpus).toEqual({
      'g5.xlarge': 1,
    });
  });

  it('when boa is silent, lowers the node group to what the budget allows and reports it', async () => {
    const w = world({ heartbeats: 0, publishedBudget: 20, desiredSize: 64 });
    const result = await runGuard(w.clients, settings, NOW);
    expect(result).toMatchObject({ action: 'shrink', desiredSize: 5, budget: 20 });
    const updates = w.eksMock.commandCalls(UpdateNodegroupConfigCommand);
    expect(updates).toHaveLength(1);
    // Only the desired size: the bounds stay the operator's.
    expect(updates[0]!.args[0].input.scalingConfig).toEqual({ desiredSize: 5 });
    const put = w.cwMock.commandCalls(PutMetricDataCommand)[0]!.args[0].input;
    expect(put.Namespace).toBe('boa');
    expect(put.MetricData?.find((m) => m.MetricName === 'GuardTripped')?.Value).toBe(1);
  });

  it('leaves the group alone while boa is heard from, or when it is already within the budget', async () => {
    const alive = world({ heartbeats: 3, publishedBudget: 20, desiredSize: 64 });
    expect((await runGuard(alive.clients, settings, NOW)).action).toBe('none');
    expect(alive.eksMock.commandCalls(UpdateNodegroupConfigCommand)).toHaveLength(0);
    const tripped = alive.cwMock.commandCalls(PutMetricDataCommand)[0]!.args[0].input.MetricData;
    expect(tripped?.find((m) => m.MetricName === 'GuardTripped')?.Value).toBe(0);

    // Never raises it: silent, but 3 nodes are below the 10 the deploy-time budget of 40 allows.
    const small = world({ heartbeats: 0, desiredSize: 3 });
    expect(await runGuard(small.clients, settings, NOW)).toMatchObject({ action: 'none', budget: 40 });
    expect(small.eksMock.commandCalls(UpdateNodegroupConfigCommand)).toHaveLength(0);
  });

  it('holds the group to a budget cut in the last bucket it reads, not the value before the cut', async () => {
    const w = world({ heartbeats: 0, desiredSize: 64 });
    // Two-minute buckets over 24 hours: boa published 40, then 8 just before it went silent.
    w.cwMock.on(GetMetricStatisticsCommand, { MetricName: 'BudgetGpuHoursPerHour' }).callsFake((input) => ({
      Datapoints: [{ Timestamp: NOW, Minimum: 8, Maximum: 40 }].map((d) => ({
        Timestamp: d.Timestamp,
        [input.Statistics[0]]: d[input.Statistics[0] as 'Minimum' | 'Maximum'],
      })),
    }));
    expect(await runGuard(w.clients, settings, NOW)).toMatchObject({
      action: 'shrink',
      budget: 8,
      desiredSize: 2,
    });
  });

  // A first deploy with a budget: the group is created at 0 and boa has not published yet. Reporting
  // itself acting then fired the guard alarm on every new stack.
  it('does not report itself acting while the group is empty, and does when it has nodes to hold', async () => {
    const tripped = async (desiredSize: number) => {
      const w = world({ heartbeats: 0, desiredSize });
      const result = await runGuard(w.clients, settings, NOW);
      expect(w.eksMock.commandCalls(UpdateNodegroupConfigCommand)).toHaveLength(0);
      const data = w.cwMock.commandCalls(PutMetricDataCommand)[0]!.args[0].input.MetricData;
      return { result, value: data?.find((m) => m.MetricName === 'GuardTripped')?.Value };
    };
    const empty = await tripped(0);
    expect(empty.result).toMatchObject({ action: 'none', silent: true, budget: 40 });
    expect(empty.value).toBe(0);
    // Within the budget but holding nodes: still reported, as before.
    expect((await tripped(3)).value).toBe(1);
  });

  it('does not report itself acting when boa is silent and no budget is known: it can hold nothing', async () => {
    const w = world({ heartbeats: 0, desiredSize: 64 });
    const result = await runGuard(w.clients, { ...settings, budget: undefined }, NOW);
    expect(result).toMatchObject({ action: 'none', silent: true, reason: 'boa silent and no budget known' });
    expect(w.eksMock.commandCalls(UpdateNodegroupConfigCommand)).toHaveLength(0);
    const tripped = w.cwMock.commandCalls(PutMetricDataCommand)[0]!.args[0].input.MetricData;
    expect(tripped?.find((m) => m.MetricName === 'GuardTripped')?.Value).toBe(0);
  });
});

describe("budget guard's metric reads", () => {
  it("stay within GetMetricStatistics' 1,440 datapoints after CloudWatch rounds StartTime down to the minute", async () => {
    const requested = (input: any) => {
      const start = Math.floor(input.StartTime.getTime() / 60_000) * 60_000;
      return Math.ceil((input.EndTime.getTime() - start) / 1000 / input.Period);
    };
    // A run a few seconds past the minute (as EventBridge starts it), at the shortest and longest guard.
    const now = new Date('2026-11-01T12:00:07.250Z');
    for (const guardMinutes of [15, 1440]) {
      const w = world({ heartbeats: 3, publishedBudget: 20, desiredSize: 4 });
      await runGuard(w.clients, { ...settings, guardMinutes }, now);
      const reads = w.cwMock.commandCalls(GetMetricStatisticsCommand).map((c) => c.args[0].input);
      expect(reads.map((r) => r.MetricName)).toEqual(['Heartbeat', 'BudgetGpuHoursPerHour']);
      for (const read of reads) expect(requested(read)).toBeLessThanOrEqual(1440);
    }
    // The heartbeat keeps minute resolution for the usual guard; a whole day gets 2-minute periods.
    expect(periodFor(new Date(now.getTime() - 15 * 60_000), now)).toBe(60);
    expect(periodFor(new Date(now.getTime() - 86_400_000), now)).toBe(120);
  });
});

describe('budget guard on an emulated node group', () => {
  it('lifts the scale-in protection boa left on its busy nodes, so the group really comes down to what the budget allows', async () => {
    const clock = new ManualClock();
    const group = emulateNodegroup({ clock, minSize: 0, maxSize: 16, desiredSize: 6 });
    const nodes = group.asg.live().map((i) => i.id);
    // What boa leaves when it crashes: its busy nodes protected before it last lowered the size.
    group.asg.setProtection(nodes.slice(0, 5), true);
    const cloudwatch = new CloudWatchClient({ region: 'us-east-1' });
    const cwMock = mockClient(cloudwatch);
    cwMock.on(GetMetricStatisticsCommand).resolves({ Datapoints: [] }).on(PutMetricDataCommand).resolves({});
    const clients = { eks: group.eks, cloudwatch, autoscaling: group.autoscaling };

    const result = await runGuard(clients, { ...settings, budget: 8 }, NOW);
    clock.advance(60);
    group.asg.step();
    expect(result).toMatchObject({ action: 'shrink', desiredSize: 2, unprotected: 5 });
    expect(group.asg.live()).toHaveLength(2);
    expect(group.asg.live().every((i) => !i.protectedFromScaleIn)).toBe(true);

    // A later run whose desired size is already within the budget still lifts what kept more running:
    // the size was lowered while every node was protected, so none went.
    group.setDesiredOutside(4);
    clock.advance(120); // the two new nodes are in service
    group.asg.setProtection(
      group.asg.live().map((i) => i.id),
      true,
    );
    group.asg.desiredCapacity = 2;
    group.asg.step();
    expect(group.asg.live()).toHaveLength(4);
    const again = await runGuard(clients, { ...settings, budget: 8 }, NOW);
    group.asg.step();
    expect(again).toMatchObject({ action: 'shrink', unprotected: 4 });
    expect(group.asg.live()).toHaveLength(2);

    // A refusal that is not about an instance (no permission) fails the run, for the Lambda's error alarm.
    group.asg.setProtection(
      group.asg.live().map((i) => i.id),
      true,
    );
    group.setDesiredOutside(4);
    clock.advance(120);
    group.asg.setProtection(
      group.asg.live().map((i) => i.id),
      true,
    );
    group.asg.desiredCapacity = 2;
    group.asgMock.on(SetInstanceProtectionCommand).rejects(
      Object.assign(new Error('User is not authorized to perform: autoscaling:SetInstanceProtection'), {
        name: 'AccessDenied',
      }),
    );
    await expect(runGuard(clients, { ...settings, budget: 8 }, NOW)).rejects.toThrow(/not authorized/);
  });
});

describe('budget guard while the node group is in another update', () => {
  function silentGroup() {
    const clock = new ManualClock();
    const group = emulateNodegroup({ clock, minSize: 0, maxSize: 16, desiredSize: 6 });
    const cloudwatch = new CloudWatchClient({ region: 'us-east-1' });
    const cwMock = mockClient(cloudwatch);
    cwMock.on(GetMetricStatisticsCommand).resolves({ Datapoints: [] }).on(PutMetricDataCommand).resolves({});
    const clients = { eks: group.eks, cloudwatch, autoscaling: group.autoscaling };
    return { group, clients, cwMock };
  }

  it('waits out ResourceInUseException within the run instead of failing it, re-reading the group', async () => {
    const { group, clients, cwMock } = silentGroup();
    // EKS is busy with an update of its own (an AMI update, the bounds handler): config updates refused.
    group.startVersionUpdate(0);
    const sleeps: number[] = [];
    const sleep = async (ms: number) => {
      sleeps.push(ms);
      if (sleeps.length === 2) group.finishVersionUpdate();
    };
    const result = await runGuard(clients, { ...settings, budget: 8 }, NOW, { sleep });
    expect(result).toMatchObject({ action: 'shrink', desiredSize: 2 });
    expect(group.group.desiredSize).toBe(2);
    const sent = group.updateCalls().map((c) => c.args[0].input.scalingConfig);
    expect(sent).toEqual([{ desiredSize: 2 }, { desiredSize: 2 }, { desiredSize: 2 }]);
    expect(sleeps).toHaveLength(2);
    // The run still reports that it holds the group.
    const put = cwMock.commandCalls(PutMetricDataCommand)[0]!.args[0].input;
    expect(put.MetricData?.[0]).toMatchObject({ MetricName: 'GuardTripped', Value: 1 });
  });

  it('sends nothing more when the other update already brought the group within the budget', async () => {
    const { group, clients } = silentGroup();
    group.startVersionUpdate(0);
    const sleep = async () => {
      group.finishVersionUpdate();
      group.setDesiredOutside(1); // whoever held the group lowered it meanwhile
    };
    const result = await runGuard(clients, { ...settings, budget: 8 }, NOW, { sleep });
    expect(result).toMatchObject({ action: 'shrink' });
    expect(group.updateCalls()).toHaveLength(1);
    expect(group.group.desiredSize).toBe(1); // never raised back to what the budget allows
  });

  it('leaves the group alone when it was raised while the guard waited: boa is back, resizing', async () => {
    const { group, clients } = silentGroup();
    // boa's first resize after its silence holds the group; its heartbeat is not in CloudWatch yet.
    group.startVersionUpdate(0);
    const sleep = async () => {
      group.finishVersionUpdate();
      group.setDesiredOutside(8);
    };
    const result = await runGuard(clients, { ...settings, budget: 8 }, NOW, { sleep });
    expect(result).toMatchObject({ action: 'shrink', raisedMeanwhile: 8 });
    expect(group.updateCalls()).toHaveLength(1); // the one refused while boa's update ran
    expect(group.group.desiredSize).toBe(8);
  });

  it('gives up within the Lambda timeout, with an error that names the busy group and the sizes', async () => {
    const { group, clients } = silentGroup();
    group.startVersionUpdate(0);
    const sleeps: number[] = [];
    const sleep = async (ms: number) => {
      sleeps.push(ms);
    };
    await expect(runGuard(clients, { ...settings, budget: 8 }, NOW, { sleep })).rejects.toThrow(
      /node group boa\/gpu still busy with another update after \d+ attempts \(ResourceInUseException\); desired size left at 6, the budget allows 2/,
    );
    expect(group.updateCalls().length).toBeGreaterThan(1);
    // The guard runs with a one-minute timeout: its waits leave room for the calls.
    expect(sleeps.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(40_000);
  });
});

/** The one resource of `type` whose properties match, with its logical id. */
function only(template: Template, type: string, props: Record<string, unknown>): [string, any] {
  const found = Object.entries(template.findResources(type, { Properties: props }));
  expect(found).toHaveLength(1);
  return found[0] as [string, any];
}

/** An AwsCustomResource's SDK call (its Create property is JSON joined with CloudFormation tokens). */
function sdkCall(resource: any): string {
  return JSON.stringify(resource.Properties.Create);
}

/**
 * Evaluates the alarm's metric math on one window's averages the way CloudWatch does for this expression
 * (FILL(m, v) is m, or v where m has no datapoint), so the test checks what the alarm means, not its text.
 */
function breaches(expression: string, instances: number, budget: number | undefined): boolean {
  const js = expression.replace(/FILL\(budget, ([0-9.]+)\)/, (_, v: string) => String(budget ?? Number(v)));
  const value = new Function('instances', `return ${js};`)(instances) as number;
  return value > 0;
}

describe('budget guard in the CDK app', () => {
  it('alarms on a missing heartbeat and runs the guard every 5 minutes; its only Auto Scaling change is protection, on the GPU group', () => {
    const template = synthTemplate({ ...CIDRS, budget: 40, guardMinutes: 15 });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'Heartbeat',
      Namespace: 'boa',
      Statistic: 'SampleCount',
      Period: 300,
      EvaluationPeriods: 3,
      ComparisonOperator: 'LessThanThreshold',
      TreatMissingData: 'breaching',
      AlarmActions: Match.anyValue(),
    });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({ GUARD_MINUTES: '15', GPUS_PER_NODE: '4', BUDGET: '40' }),
      },
    });
    template.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(5 minutes)' });
    // A guard that keeps failing reaches the topic, not only its log.
    const [handlerId] = only(template, 'AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ GUARD_MINUTES: '15' }) },
    });
    const [, failing] = only(template, 'AWS::CloudWatch::Alarm', {
      AlarmName: Match.stringLikeRegexp('budget-guard-failing'),
    });
    expect(failing.Properties).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: handlerId } }],
      Statistic: 'Sum',
      Period: 300,
      EvaluationPeriods: 3,
      DatapointsToAlarm: 3,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      Threshold: 1,
      AlarmActions: [{ Ref: expect.stringMatching(/AlarmTopic/) }],
    });
    // A guard that never runs has no errors: its missing invocations are the breach (found in a deploy review).
    const [, notRunning] = only(template, 'AWS::CloudWatch::Alarm', {
      AlarmName: Match.stringLikeRegexp('budget-guard-not-running'),
    });
    expect(notRunning.Properties).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'Invocations',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: handlerId } }],
      Statistic: 'Sum',
      Period: 300,
      EvaluationPeriods: 3,
      DatapointsToAlarm: 3,
      ComparisonOperator: 'LessThanThreshold',
      Threshold: 1,
      TreatMissingData: 'breaching',
      AlarmActions: [{ Ref: expect.stringMatching(/AlarmTopic/) }],
      OKActions: [{ Ref: expect.stringMatching(/AlarmTopic/) }],
    });
    // Every alarm says when it clears, so whoever was paged learns the guard stopped holding the group.
    for (const alarm of Object.values(template.findResources('AWS::CloudWatch::Alarm')) as any[]) {
      expect(alarm.Properties.OKActions, alarm.Properties.AlarmName).toEqual(alarm.Properties.AlarmActions);
    }
    // The guard reads metrics, the node group and its ASG, sets the desired size and lifts protection.
    const policies = Object.values(
      template.findResources('AWS::IAM::Policy', {
        Properties: { Roles: [{ Ref: Match.stringLikeRegexp('BudgetGuardHandlerServiceRole') }] },
      }),
    );
    const statements = policies.flatMap((p: any) => p.Properties.PolicyDocument.Statement as any[]);
    const actions = statements.flatMap((st) => [st.Action].flat() as string[]);
    expect(actions).toContain('eks:UpdateNodegroupConfig');
    expect(actions.filter((a) => a.startsWith('autoscaling:')).sort()).toEqual([
      'autoscaling:DescribeAutoScalingGroups',
      'autoscaling:SetInstanceProtection',
    ]);
    const protection = statements.find((st) => st.Action === 'autoscaling:SetInstanceProtection');
    expect(Object.keys(protection.Condition.StringEquals).sort()).toEqual([
      'autoscaling:ResourceTag/eks:cluster-name',
      'autoscaling:ResourceTag/eks:nodegroup-name',
    ]);
  }, 300_000);

  it("turns on the node group's Auto Scaling group metrics at deploy and alarms on AWS's in-service count x GPUs per node against the budget, on the budget topic", () => {
    const template = synthTemplate({ ...CIDRS, budget: 40 });
    const [gpuId] = only(template, 'AWS::EKS::Nodegroup', { AmiType: 'AL2023_x86_64_NVIDIA' });
    const calls = Object.entries(template.findResources('Custom::AWS'));
    const [describeId, describe] = calls.find(([, r]) => sdkCall(r).includes('DescribeNodegroup'))!;
    expect(sdkCall(describe)).toContain(gpuId); // names the GPU node group (its generated name)
    expect(sdkCall(describe)).toContain('nodegroup.resources.autoScalingGroups.0.name');
    const [, enable] = calls.find(([, r]) => sdkCall(r).includes('EnableMetricsCollection'))!;
    const asgName = { 'Fn::GetAtt': [describeId, 'nodegroup.resources.autoScalingGroups.0.name'] };
    expect(sdkCall(enable)).toContain(JSON.stringify(asgName));
    expect(sdkCall(enable)).toContain('GroupInServiceInstances');
    expect(sdkCall(enable)).toContain('1Minute');
    // Both calls again on update (a replaced node group has a new name, so a new Auto Scaling group).
    expect(JSON.stringify(enable.Properties.Update)).toContain('EnableMetricsCollection');
    expect(JSON.stringify(describe.Properties.Update)).toContain('DescribeNodegroup');
    // Only that group may be changed: EnableMetricsCollection under the group's EKS tags.
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: [
          Match.objectLike({
            Action: 'autoscaling:EnableMetricsCollection',
            Resource: '*',
            Condition: {
              StringEquals: {
                'autoscaling:ResourceTag/eks:nodegroup-name': { 'Fn::GetAtt': [gpuId, 'NodegroupName'] },
                'autoscaling:ResourceTag/eks:cluster-name': 'boa',
              },
            },
          }),
        ],
      },
    });
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: [
          Match.objectLike({ Action: 'eks:DescribeNodegroup', Resource: { 'Fn::GetAtt': [gpuId, 'Arn'] } }),
        ],
      },
    });

    const [, alarm] = only(template, 'AWS::CloudWatch::Alarm', {
      AlarmName: Match.stringLikeRegexp('in-service-gpus-over-budget'),
    });
    const [, overspend] = only(template, 'AWS::CloudWatch::Alarm', {
      AlarmName: Match.stringLikeRegexp('paid-average-over-budget'),
    });
    // The same topic as the budget alarm boa's own metrics feed.
    expect(alarm.Properties.AlarmActions).toEqual(overspend.Properties.AlarmActions);
    // Blind (the group metrics turned off, the group's name gone) is said too, not left to the console.
    expect(alarm.Properties.InsufficientDataActions).toEqual(overspend.Properties.AlarmActions);
    expect(alarm.Properties).toMatchObject({
      ComparisonOperator: 'GreaterThanThreshold',
      Threshold: 0,
      EvaluationPeriods: 1,
    });
    const queries = alarm.Properties.Metrics as any[];
    const stat = (id: string) => queries.find((q) => q.Id === id).MetricStat;
    expect(stat('instances')).toEqual({
      Metric: {
        Namespace: 'AWS/AutoScaling',
        MetricName: 'GroupInServiceInstances',
        Dimensions: [{ Name: 'AutoScalingGroupName', Value: asgName }],
      },
      Period: 86_400,
      Stat: 'Average',
    });
    expect(stat('budget')).toMatchObject({
      Metric: { Namespace: 'boa', MetricName: 'BudgetGpuHoursPerHour' },
      Period: 86_400,
      Stat: 'Average',
    });
    const expression = queries.find((q) => q.Expression).Expression as string;
    // Budget 40, 4 GPUs per node: 11 nodes on average (44 GPUs, 110%) is within; 11.25 (45 GPUs) is not.
    expect(breaches(expression, 11, 40)).toBe(false);
    expect(breaches(expression, 11.25, 40)).toBe(true);
    // A budget boa published (20) counts, not the deploy-time one; without any, the deploy-time one.
    expect(breaches(expression, 6, 20)).toBe(true);
    expect(breaches(expression, 6, undefined)).toBe(false);
    expect(breaches(expression, 12, undefined)).toBe(true);
  }, 300_000);

  it('keeps the heartbeat and in-service alarms without the guard Lambda when budgetGuard is false', () => {
    const template = synthTemplate({ ...CIDRS, budgetGuard: false });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'Heartbeat' });
    const [, alarm] = only(template, 'AWS::CloudWatch::Alarm', {
      AlarmName: Match.stringLikeRegexp('in-service-gpus-over-budget'),
    });
    // No deploy-time budget: while boa has published none, any GPU in service over the window breaches.
    const expression = (alarm.Properties.Metrics as any[]).find((q) => q.Expression).Expression as string;
    expect(breaches(expression, 0, undefined)).toBe(false);
    expect(breaches(expression, 0.01, undefined)).toBe(true);
    template.resourcePropertiesCountIs('AWS::Events::Rule', { ScheduleExpression: 'rate(5 minutes)' }, 0);
    template.resourcePropertiesCountIs(
      'AWS::CloudWatch::Alarm',
      { AlarmName: Match.stringLikeRegexp('budget-guard-failing') },
      0,
    );
    template.resourcePropertiesCountIs(
      'AWS::CloudWatch::Alarm',
      { AlarmName: Match.stringLikeRegexp('budget-guard-not-running') },
      0,
    );
    // No guard to agree with: boa is not told a silence to hold itself to.
    const env = kubernetesObjects(template).get('Deployment/boa').spec.template.spec.containers[0].env;
    expect(env.map((e: { name: string }) => e.name)).not.toContain('BOA_GUARD_MINUTES');
  }, 300_000);
});

describe('the silence alarm and guardMinutes', () => {
  /** The heartbeat alarm of a BudgetGuard made with this guardMinutes, alone in a stack (fast). */
  function heartbeatAlarm(guardMinutes: number): Record<string, any> {
    const app = new App({ context: { 'aws:cdk:disable-asset-staging': true } });
    const stack = new Stack(app, 'S', { env: { region: 'us-east-1' } });
    new BudgetGuard(stack, 'Guard', {
      clusterName: 'boa',
      nodegroupName: 'gpu',
      nodegroupArn: 'arn:aws:eks:us-east-1:123456789012:nodegroup/boa/gpu/x',
      gpusPerNode: 4,
      guardMinutes,
      enableGuardLambda: true,
      topic: new sns.Topic(stack, 'Topic'),
    });
    const alarms = Template.fromStack(stack).findResources('AWS::CloudWatch::Alarm', {
      Properties: { MetricName: 'Heartbeat' },
    });
    expect(Object.keys(alarms)).toHaveLength(1);
    return (Object.values(alarms)[0] as any).Properties;
  }

  // docs/deploy.md: guardMinutes is the silence "before the silence alarm fires and the guard acts"; the
  // guard Lambda waits exactly that long, so the alarm must too, not the next multiple of 5 minutes.
  it.each([5, 7, 12, 15, 61, 1440])(
    'fires after exactly %i silent minutes, every period of them empty',
    (guardMinutes) => {
      const alarm = heartbeatAlarm(guardMinutes);
      expect((alarm.Period * alarm.EvaluationPeriods) / 60).toBe(guardMinutes);
      expect(alarm.DatapointsToAlarm).toBe(alarm.EvaluationPeriods);
      expect(alarm.TreatMissingData).toBe('breaching');
      // CloudWatch's limit on an alarm's evaluation range: one day.
      expect(alarm.Period * alarm.EvaluationPeriods).toBeLessThanOrEqual(86_400);
    },
  );
});
