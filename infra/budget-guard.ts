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
import { METRICS_DIMENSION, METRICS_NAMESPACE } from './monitoring.ts';

export interface BudgetGuardProps {
  readonly clusterName: string;
  readonly nodegroupName: string;
  readonly nodegroupArn: string;
  readonly gpusPerNode: number;
  /** Deploy-time budget, used until boa has published one. */
  readonly budget?: number;
  /** Minutes of silence from boa after which the guard acts (and the heartbeat alarm fires). */
  readonly guardMinutes: number;
  /** The guard Lambda that lowers the node group; the alarms are created either way. */
  readonly enableGuardLambda: boolean;
  readonly topic: sns.ITopic;
}

/** Paid GPUs above the budget by more than this fraction, for the alarm on the GPUs AWS has in service. */
export const IN_SERVICE_TOLERANCE = 0.1;

/**
 * The budget held from outside boa: boa's Heartbeat metric, whose absence for guardMinutes is a breach;
 * an alarm on the GPUs the node group's Auto Scaling group really has in service (published by the
 * guard from AWS, not by boa) against the budget; and the guard Lambda that, when boa is silent, lowers
 * the node group's desired size to what the budget allows (infra/budget-guard/index.mjs).
 */
export class BudgetGuard extends Construct {
  readonly heartbeatAlarm: cloudwatch.Alarm;
  readonly inServiceAlarm: cloudwatch.Alarm | undefined;
  readonly trippedAlarm: cloudwatch.Alarm | undefined;
  readonly handler: lambda.Function | undefined;

  constructor(scope: Construct, id: string, props: BudgetGuardProps) {
    super(scope, id);
    const dimensionsMap = { [METRICS_DIMENSION]: props.clusterName };
    const periods = Math.max(1, Math.ceil(props.guardMinutes / 5));

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
        period: Duration.minutes(5),
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

    if (!props.enableGuardLambda) return;

    this.handler = new lambda.Function(this, 'Handler', {
      description:
        'Budget guard: real in-service GPUs; lowers the GPU node group to the budget when boa is silent',
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
      },
      logGroup: new logs.LogGroup(this, 'HandlerLogs', { retention: logs.RetentionDays.ONE_MONTH }),
    });
    this.handler.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['eks:DescribeNodegroup', 'eks:UpdateNodegroupConfig'],
        resources: [props.nodegroupArn],
      }),
    );
    this.handler.addToRolePolicy(
      new iam.PolicyStatement({
        // No resource-level permissions for these; PutMetricData is confined to boa's namespace.
        actions: ['cloudwatch:GetMetricStatistics', 'autoscaling:DescribeAutoScalingGroups'],
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
    this.handler.addToRolePolicy(
      new iam.PolicyStatement({
        // Only the node group's Auto Scaling group, by the tags EKS puts on it (its name has a UUID).
        actions: ['autoscaling:EnableMetricsCollection'],
        resources: ['*'],
        conditions: {
          StringEquals: {
            'autoscaling:ResourceTag/eks:nodegroup-name': props.nodegroupName,
            'autoscaling:ResourceTag/eks:cluster-name': props.clusterName,
          },
        },
      }),
    );
    new events.Rule(this, 'Schedule', {
      description: 'Runs the budget guard every 5 minutes',
      schedule: events.Schedule.rate(Duration.minutes(5)),
      targets: [new targets.LambdaFunction(this.handler)],
    });

    const budgetGpus = (props.budget ?? 0) * (1 + IN_SERVICE_TOLERANCE);
    const inService = new cloudwatch.Metric({
      namespace: METRICS_NAMESPACE,
      metricName: 'InServiceGpus',
      dimensionsMap,
      statistic: cloudwatch.Stats.AVERAGE,
      period: Duration.hours(1),
    });
    const budgetMetric = new cloudwatch.Metric({
      namespace: METRICS_NAMESPACE,
      metricName: 'BudgetGpuHoursPerHour',
      dimensionsMap,
      statistic: cloudwatch.Stats.MAXIMUM,
      period: Duration.hours(1),
    });
    // The hourly average of GPUs AWS has in service above the budget (boa's latest, or the deploy-time one).
    this.inServiceAlarm = new cloudwatch.Alarm(this, 'InServiceAlarm', {
      alarmName: `boa-${props.clusterName}-in-service-gpus-over-budget`,
      alarmDescription:
        `GPUs in service in the node group's Auto Scaling group (from AWS, averaged over an hour) exceed the ` +
        `budget by more than ${IN_SERVICE_TOLERANCE * 100}% on ${props.clusterName}.`,
      metric: new cloudwatch.MathExpression({
        expression: `gpus - ${1 + IN_SERVICE_TOLERANCE} * FILL(budget, ${props.budget ?? 0})`,
        usingMetrics: { gpus: inService, budget: budgetMetric },
        period: Duration.hours(1),
        label: `In-service GPUs above 110% of the budget (fallback ${budgetGpus})`,
      }),
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      threshold: 0,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    this.inServiceAlarm.addAlarmAction(new actions.SnsAction(props.topic));

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
  }
}
