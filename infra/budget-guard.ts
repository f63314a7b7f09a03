import * as path from 'node:path';
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { instanceTypeFacts, knownInstanceTypes } from '../src/core/instance-types.ts';
import { NodegroupAsgMetrics } from './asg-metrics.ts';
import { clusterNodegroupsArn } from './iam.ts';
import { METRICS_DIMENSION, METRICS_NAMESPACE, OVERSPEND_TOLERANCE } from './monitoring.ts';

export interface BudgetGuardProps {
  readonly clusterName: string;
  readonly nodegroupName: string;
  readonly nodegroupArn: string;
  /**
   * With it, the guard counts the running nodes of a group the guarded one replaced (ListNodegroups): the
   * cluster's ARN and name as the cluster resource gives them (the same node-group ARN pattern as boa's).
   */
  readonly cluster?: { readonly clusterArn: string; readonly clusterName: string };
  readonly gpusPerNode: number;
  /** Deploy-time budget, used until boa has published one. */
  readonly budget?: number;
  /** Minutes of silence from boa after which the guard acts (and the heartbeat alarm fires). */
  readonly guardMinutes: number;
  /** The guard Lambda that lowers the node group; the alarms are created either way. */
  readonly enableGuardLambda: boolean;
  readonly topic: sns.ITopic;
}

/** GPUs per instance type boa knows (src/core/instance-types.ts), for the guard Lambda (its env). */
export function instanceTypeGpus(): Record<string, number> {
  return Object.fromEntries(knownInstanceTypes().map((type) => [type, instanceTypeFacts(type)!.gpus]));
}

/**
 * The window the alarm on the GPUs AWS has in service averages over: boa's default budget window
 * (`budgetWindowHours`, 24 h). boa may run above the budget for a while to spend room saved earlier in
 * the window (docs/budget.md, the spend ceiling), so only the window's average says whether the budget held.
 */
export const IN_SERVICE_WINDOW = Duration.hours(24);

/**
 * The budget held from outside boa: boa's Heartbeat metric, whose absence for guardMinutes is a breach;
 * an alarm on the GPUs the node group's Auto Scaling group really has in service (AWS's own group metric
 * GroupInServiceInstances, turned on by the CDK app) against the budget; and the guard Lambda that, when
 * boa is silent, lowers the node group's desired size to what the budget allows (infra/budget-guard/index.mjs).
 */
export class BudgetGuard extends Construct {
  readonly heartbeatAlarm: cloudwatch.Alarm;
  readonly groupMetrics: NodegroupAsgMetrics;
  readonly inServiceAlarm: cloudwatch.Alarm;
  readonly trippedAlarm: cloudwatch.Alarm | undefined;
  readonly failingAlarm: cloudwatch.Alarm | undefined;
  readonly notRunningAlarm: cloudwatch.Alarm | undefined;
  readonly handler: lambda.Function | undefined;

  constructor(scope: Construct, id: string, props: BudgetGuardProps) {
    super(scope, id);
    const dimensionsMap = { [METRICS_DIMENSION]: props.clusterName };
    // guardMinutes of silence exactly, as the guard Lambda counts them: 5-minute periods when they divide
    // it, else 1-minute ones (a ceiling to 5 minutes would fire up to 4 minutes after the guard acts).
    const periodMinutes = props.guardMinutes % 5 === 0 ? 5 : 1;
    const periods = Math.max(1, Math.ceil(props.guardMinutes / periodMinutes));

    this.heartbeatAlarm = new cloudwatch.Alarm(this, 'HeartbeatAlarm', {
      alarmName: `boa-${props.clusterName}-silent`,
      alarmDescription:
        `boa on ${props.clusterName} has published no Heartbeat for ${props.guardMinutes} minutes: it is down ` +
        'or cannot reach CloudWatch, and nothing inside it is holding the budget.',
      metric: new cloudwatch.Metric({
        namespace: METRICS_NAMESPACE,
        metricName: 'Heartbeat',
        dimensionsMap,
        statistic: cloudwatch.Stats.SAMPLE_COUNT,
        period: Duration.minutes(periodMinutes),
      }),
      comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
      threshold: 1,
      evaluationPeriods: periods,
      datapointsToAlarm: periods,
      // No data is the breach this alarm exists for.
      treatMissingData: cloudwatch.TreatMissingData.BREACHING,
    });
    this.heartbeatAlarm.addAlarmAction(new actions.SnsAction(props.topic));
    this.heartbeatAlarm.addOkAction(new actions.SnsAction(props.topic));

    this.groupMetrics = new NodegroupAsgMetrics(this, 'GroupMetrics', {
      clusterName: props.clusterName,
      nodegroupName: props.nodegroupName,
      nodegroupArn: props.nodegroupArn,
    });
    // AWS's count, not boa's: published by Auto Scaling every minute whether boa runs or not.
    const inService = new cloudwatch.Metric({
      namespace: 'AWS/AutoScaling',
      metricName: 'GroupInServiceInstances',
      dimensionsMap: { AutoScalingGroupName: this.groupMetrics.autoScalingGroupName },
      statistic: cloudwatch.Stats.AVERAGE,
      period: IN_SERVICE_WINDOW,
    });
    // The budget as boa publishes it, averaged over the same window (a budget changed within the window
    // counts for the time it was in force); while boa has published none, the deploy-time budget.
    const budget = new cloudwatch.Metric({
      namespace: METRICS_NAMESPACE,
      metricName: 'BudgetGpuHoursPerHour',
      dimensionsMap,
      statistic: cloudwatch.Stats.AVERAGE,
      period: IN_SERVICE_WINDOW,
    });
    const fallback = props.budget ?? 0;
    const factor = 1 + OVERSPEND_TOLERANCE;
    this.inServiceAlarm = new cloudwatch.Alarm(this, 'InServiceAlarm', {
      alarmName: `boa-${props.clusterName}-in-service-gpus-over-budget`,
      alarmDescription:
        `The GPUs the node group's Auto Scaling group had in service on ${props.clusterName} (AWS's ` +
        `GroupInServiceInstances x ${props.gpusPerNode} GPUs per node), averaged over the last ` +
        `${IN_SERVICE_WINDOW.toHours()} h, exceed the budget by more than ${OVERSPEND_TOLERANCE * 100}% ` +
        `(the budget boa published, or ${fallback} GPU-hours per hour while it published none). ` +
        'INSUFFICIENT_DATA: no in-service count for a day (the group metrics turned off), so nothing is checked.',
      metric: new cloudwatch.MathExpression({
        expression: `instances * ${props.gpusPerNode} - ${factor} * FILL(budget, ${fallback})`,
        usingMetrics: { instances: inService, budget },
        period: IN_SERVICE_WINDOW,
        label: `GPUs in service above ${Math.round(factor * 100)}% of the budget (${IN_SERVICE_WINDOW.toHours()} h average)`,
      }),
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      threshold: 0,
      evaluationPeriods: 1,
      // No count at all means the group metrics were turned off: INSUFFICIENT_DATA, visible, not silent OK.
      treatMissingData: cloudwatch.TreatMissingData.MISSING,
    });
    this.inServiceAlarm.addAlarmAction(new actions.SnsAction(props.topic));
    this.inServiceAlarm.addOkAction(new actions.SnsAction(props.topic));
    // Without data this check, the one that does not trust boa, holds nothing: said on the topic, where
    // before only the console showed it. A new alarm starts there with no action run, so a first deploy
    // should send nothing for it (CloudWatch's documented behaviour; no AWS account in the tests).
    this.inServiceAlarm.addInsufficientDataAction(new actions.SnsAction(props.topic));

    if (!props.enableGuardLambda) return;

    this.handler = new lambda.Function(this, 'Handler', {
      description: 'Budget guard: lowers the GPU node group to what the budget allows when boa is silent',
      runtime: lambda.Runtime.NODEJS_24_X,
      handler: 'index.handler',
      code: lambda.Code.fromAsset(path.join(import.meta.dirname, 'budget-guard')),
      timeout: Duration.minutes(1),
      memorySize: 256,
      environment: {
        CLUSTER_NAME: props.clusterName,
        NODEGROUP_NAME: props.nodegroupName,
        GPUS_PER_NODE: String(props.gpusPerNode),
        GUARD_MINUTES: String(props.guardMinutes),
        ...(props.budget !== undefined ? { BUDGET: String(props.budget) } : {}),
        // A replaced group's nodes (another type, as a rule) are counted at their own GPUs.
        INSTANCE_TYPE_GPUS: JSON.stringify(instanceTypeGpus()),
      },
      logGroup: new logs.LogGroup(this, 'HandlerLogs', { retention: logs.RetentionDays.ONE_MONTH }),
    });
    this.handler.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['eks:DescribeNodegroup', 'eks:UpdateNodegroupConfig'],
        resources: [props.nodegroupArn],
      }),
    );
    if (props.cluster) {
      // A group the guarded one replaced (an instance-type change) is found among the cluster's by its
      // labels and tags, read-only: its running nodes are paid, so the guarded group is allowed fewer.
      this.handler.addToRolePolicy(
        new iam.PolicyStatement({ actions: ['eks:ListNodegroups'], resources: [props.cluster.clusterArn] }),
      );
      this.handler.addToRolePolicy(
        new iam.PolicyStatement({
          actions: ['eks:DescribeNodegroup'],
          resources: [clusterNodegroupsArn(props.cluster.clusterArn, props.cluster.clusterName)],
        }),
      );
    }
    // Lifting the scale-in protection boa put on its busy nodes, or the lowered desired size leaves them
    // running: only on the node group's Auto Scaling group, found by the tags EKS puts on it.
    this.handler.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['autoscaling:SetInstanceProtection'],
        resources: ['*'],
        conditions: {
          StringEquals: {
            'autoscaling:ResourceTag/eks:nodegroup-name': props.nodegroupName,
            'autoscaling:ResourceTag/eks:cluster-name': props.clusterName,
          },
        },
      }),
    );
    this.handler.addToRolePolicy(
      new iam.PolicyStatement({
        // No resource-level permissions for these; PutMetricData below is confined to boa's namespace.
        actions: ['autoscaling:DescribeAutoScalingGroups', 'cloudwatch:GetMetricStatistics'],
        resources: ['*'],
      }),
    );
    this.handler.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['cloudwatch:PutMetricData'],
        resources: ['*'],
        conditions: { StringEquals: { 'cloudwatch:namespace': METRICS_NAMESPACE } },
      }),
    );
    new events.Rule(this, 'Schedule', {
      description: 'Runs the budget guard every 5 minutes',
      schedule: events.Schedule.rate(Duration.minutes(5)),
      targets: [new targets.LambdaFunction(this.handler)],
    });

    this.trippedAlarm = new cloudwatch.Alarm(this, 'TrippedAlarm', {
      alarmName: `boa-${props.clusterName}-budget-guard-acting`,
      alarmDescription: `boa on ${props.clusterName} is silent and the budget guard holds the node group at what the budget allows.`,
      metric: new cloudwatch.Metric({
        namespace: METRICS_NAMESPACE,
        metricName: 'GuardTripped',
        dimensionsMap,
        statistic: cloudwatch.Stats.MAXIMUM,
        period: Duration.minutes(5),
      }),
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      threshold: 1,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    this.trippedAlarm.addAlarmAction(new actions.SnsAction(props.topic));
    // Like every other alarm: say when the guard stops holding the group (boa back, or the group empty).
    this.trippedAlarm.addOkAction(new actions.SnsAction(props.topic));

    // A guard that throws (AccessDenied, throttling, a changed API) holds nothing and says so only in its
    // log: three failed runs in a row (15 minutes) reach the topic.
    this.failingAlarm = new cloudwatch.Alarm(this, 'FailingAlarm', {
      alarmName: `boa-${props.clusterName}-budget-guard-failing`,
      alarmDescription: `The budget guard Lambda on ${props.clusterName} failed its last 3 runs: it would not hold the node group if boa fell silent. See its log group.`,
      metric: this.handler.metricErrors({ period: Duration.minutes(5), statistic: cloudwatch.Stats.SUM }),
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      threshold: 1,
      evaluationPeriods: 3,
      datapointsToAlarm: 3,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    this.failingAlarm.addAlarmAction(new actions.SnsAction(props.topic));
    this.failingAlarm.addOkAction(new actions.SnsAction(props.topic));

    // A guard never run (its rule disabled, its invocations throttled or denied) has no Errors either:
    // Lambda publishes Invocations only when nonzero, so missing data is the breach here.
    this.notRunningAlarm = new cloudwatch.Alarm(this, 'NotRunningAlarm', {
      alarmName: `boa-${props.clusterName}-budget-guard-not-running`,
      alarmDescription: `The budget guard Lambda on ${props.clusterName} has not run for 15 minutes (its schedule disabled, or its invocations throttled or denied): it would not hold the node group if boa fell silent.`,
      metric: this.handler.metricInvocations({
        period: Duration.minutes(5),
        statistic: cloudwatch.Stats.SUM,
      }),
      comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
      threshold: 1,
      evaluationPeriods: 3,
      datapointsToAlarm: 3,
      treatMissingData: cloudwatch.TreatMissingData.BREACHING,
    });
    this.notRunningAlarm.addAlarmAction(new actions.SnsAction(props.topic));
    this.notRunningAlarm.addOkAction(new actions.SnsAction(props.topic));
  }
}
