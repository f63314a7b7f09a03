import {
  AutoScaling,
  DescribeAutoScalingGroupsCommand,
  EnableMetricsCollectionCommand,
} from '@aws-sdk/client-auto-scaling';
import { CloudWatch, GetMetricStatisticsCommand, PutMetricDataCommand } from '@aws-sdk/client-cloudwatch';
import { DescribeNodegroupCommand, EKS, UpdateNodegroupConfigCommand } from '@aws-sdk/client-eks';
import { Match } from 'aws-cdk-lib/assertions';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { allowedNodes, decide, readSettings, runGuard } from '../../infra/budget-guard/index.mjs';
import { synthTemplate } from './synth.ts';

const settings = { clusterName: 'boa', nodegroupName: 'gpu', gpusPerNode: 4, guardMinutes: 15, budget: 40 };
const NOW = new Date('2026-11-01T12:00:00Z');
const CIDRS = { allowedApiCidrs: '203.0.113.0/24' };

function world(options: {
  heartbeats: number;
  publishedBudget?: number;
  desiredSize: number;
  inService: number;
}) {
  const eks = new EKS({ region: 'us-east-1' });
  const cloudwatch = new CloudWatch({ region: 'us-east-1' });
  const autoscaling = new AutoScaling({ region: 'us-east-1' });
  const eksMock = mockClient(eks);
  const cwMock = mockClient(cloudwatch);
  const asMock = mockClient(autoscaling);
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
        options.publishedBudget === undefined ? [] : [{ Timestamp: NOW, Maximum: options.publishedBudget }],
    });
  cwMock.on(PutMetricDataCommand).resolves({});
  asMock.on(DescribeAutoScalingGroupsCommand).resolves({
    AutoScalingGroups: [
      {
        AutoScalingGroupName: 'eks-gpu-1234',
        MinSize: 0,
        MaxSize: 64,
        DesiredCapacity: options.desiredSize,
        DefaultCooldown: 300,
        AvailabilityZones: ['us-east-1a'],
        HealthCheckType: 'EC2',
        CreatedTime: NOW,
        EnabledMetrics: [],
        Instances: Array.from({ length: options.inService }, (_, i) => ({
          InstanceId: `i-${i}`,
          AvailabilityZone: 'us-east-1a',
          LifecycleState: 'InService' as const,
          HealthStatus: 'Healthy',
          ProtectedFromScaleIn: false,
        })),
      },
    ],
  });
  asMock.on(EnableMetricsCollectionCommand).resolves({});
  return { clients: { eks, cloudwatch, autoscaling }, eksMock, cwMock, asMock };
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
  });

  it('when boa is silent, lowers the node group to what the budget allows and reports it', async () => {
    const w = world({ heartbeats: 0, publishedBudget: 20, desiredSize: 64, inService: 60 });
    const result = await runGuard(w.clients, settings, NOW);
    expect(result).toMatchObject({ action: 'shrink', desiredSize: 5, budget: 20, inServiceGpus: 240 });
    const updates = w.eksMock.commandCalls(UpdateNodegroupConfigCommand);
    expect(updates).toHaveLength(1);
    // Only the desired size: the bounds stay the operator's.
    expect(updates[0]!.args[0].input.scalingConfig).toEqual({ desiredSize: 5 });
    const put = w.cwMock.commandCalls(PutMetricDataCommand)[0]!.args[0].input;
    expect(put.Namespace).toBe('boa');
    expect(put.MetricData?.find((m) => m.MetricName === 'GuardTripped')?.Value).toBe(1);
    expect(put.MetricData?.find((m) => m.MetricName === 'InServiceGpus')?.Value).toBe(240);
    // Metrics collection on the node group's Auto Scaling group, for the alarm on the real GPU count.
    const enabled = w.asMock.commandCalls(EnableMetricsCollectionCommand)[0]!.args[0].input;
    expect(enabled).toMatchObject({ AutoScalingGroupName: 'eks-gpu-1234' });
    expect(enabled.Metrics).toContain('GroupInServiceInstances');
  });

  it('leaves the group alone while boa is heard from, or when it is already within the budget', async () => {
    const alive = world({ heartbeats: 3, publishedBudget: 20, desiredSize: 64, inService: 64 });
    expect((await runGuard(alive.clients, settings, NOW)).action).toBe('none');
    expect(alive.eksMock.commandCalls(UpdateNodegroupConfigCommand)).toHaveLength(0);
    const tripped = alive.cwMock.commandCalls(PutMetricDataCommand)[0]!.args[0].input.MetricData;
    expect(tripped?.find((m) => m.MetricName === 'GuardTripped')?.Value).toBe(0);

    // Never raises it: silent, but 3 nodes are below the 10 the deploy-time budget of 40 allows.
    const small = world({ heartbeats: 0, desiredSize: 3, inService: 3 });
    expect(await runGuard(small.clients, settings, NOW)).toMatchObject({ action: 'none', budget: 40 });
    expect(small.eksMock.commandCalls(UpdateNodegroupConfigCommand)).toHaveLength(0);
  });
});

describe('budget guard in the CDK app', () => {
  it('alarms on a missing heartbeat, on in-service GPUs over the budget, and runs the guard every 5 minutes', () => {
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
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: Match.stringLikeRegexp('in-service-gpus-over-budget'),
      Metrics: Match.arrayWith([
        Match.objectLike({ Expression: Match.stringLikeRegexp('gpus - 1.1 \\* FILL\\(budget, 40\\)') }),
      ]),
    });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({ GUARD_MINUTES: '15', GPUS_PER_NODE: '4', BUDGET: '40' }),
      },
    });
    template.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(5 minutes)' });
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: 'autoscaling:EnableMetricsCollection',
            Condition: {
              StringEquals: Match.objectLike({ 'autoscaling:ResourceTag/eks:cluster-name': 'boa' }),
            },
          }),
        ]),
      },
    });
  }, 300_000);

  it('keeps the heartbeat alarm without the guard Lambda when budgetGuard is false', () => {
    const template = synthTemplate({ ...CIDRS, budgetGuard: false });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'Heartbeat' });
    template.resourcePropertiesCountIs('AWS::Events::Rule', { ScheduleExpression: 'rate(5 minutes)' }, 0);
  }, 300_000);
});
