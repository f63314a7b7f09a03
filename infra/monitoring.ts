import { ArnFormat, Duration, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';

/** CloudWatch namespace of boa's metrics; boa's role may publish only here. */
export const METRICS_NAMESPACE = 'boa';

/** The one dimension on every boa metric: `Cluster` = the EKS cluster name (BOA_CLUSTER_NAME). */
export const METRICS_DIMENSION = 'Cluster';

/** Metric names boa publishes (see infra/README.md for units and meaning). */
export const METRIC_NAMES = [
  'BudgetGpuHoursPerHour',
  'PaidGpuHoursPerHour',
  'AllocatedGpuHoursPerHour',
  'PaidGpuHoursPerHourAverage',
  'WindowBudgetGpuHoursPerHour',
  'DesiredNodes',
  'ActualNodes',
  'JobsRunning',
  'JobsWaiting',
  'PredictedAvgJctSeconds',
  'Heartbeat',
  'LoadNeedsGpuHoursPerHour',
  'SpendCeilingGpus',
  'JobsQueuedForBudget',
  'CapacityBackoff',
  'NodeLaunchFailures',
  'NodesProvisionTimedOut',
  'NodeDriftCorrections',
  'NodesRemoving',
] as const;
export type MetricName = (typeof METRIC_NAMES)[number];

/** The alarm fires when the window's paid average exceeds the window's budget by more than this fraction. */
export const OVERSPEND_TOLERANCE = 0.1;

export interface MonitoringProps {
  readonly clusterName: string;
  readonly key: kms.IKey;
  readonly alarmEmail?: string;
}

/** A dashboard of budget against spending, nodes and jobs, and the overspend alarm with its topic. */
export class Monitoring extends Construct {
  readonly dashboard: cloudwatch.Dashboard;
  readonly overspendAlarm: cloudwatch.Alarm;
  readonly topic: sns.Topic;

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    const metric = (metricName: MetricName, label: string, statistic = cloudwatch.Stats.AVERAGE) =>
      new cloudwatch.Metric({
        namespace: METRICS_NAMESPACE,
        metricName,
        dimensionsMap: { [METRICS_DIMENSION]: props.clusterName },
        statistic,
        period: Duration.minutes(5),
        label,
      });

    const budget = metric('BudgetGpuHoursPerHour', 'Budget');
    const paidAverage = metric('PaidGpuHoursPerHourAverage', 'Paid (time-average over the budget window)');
    // What that average is held to: the budgets in force over the window, time-averaged (GET /v1/budget's
    // window.budgetGpuHoursPerHour). After a cut it stays above the budget now for up to a day.
    const windowBudget = metric(
      'WindowBudgetGpuHoursPerHour',
      'Budget over the window (what the paid average is held to)',
    );

    this.topic = new sns.Topic(this, 'AlarmTopic', {
      displayName: `boa ${props.clusterName} budget alarms`,
      masterKey: props.key,
      enforceSSL: true,
    });
    // CloudWatch publishes alarm notifications into the encrypted topic. enforceSSL gives the topic a
    // policy of its own, which replaces SNS's default one (that let the account's alarms publish), so
    // the alarms are allowed here, only this account's and only boa's for this cluster.
    const cloudwatchAlarms = new iam.ServicePrincipal('cloudwatch.amazonaws.com');
    const stack = Stack.of(this);
    const boaAlarmsOnly = {
      StringEquals: { 'aws:SourceAccount': stack.account },
      ArnLike: {
        'aws:SourceArn': stack.formatArn({
          service: 'cloudwatch',
          resource: 'alarm',
          resourceName: `boa-${props.clusterName}-*`,
          arnFormat: ArnFormat.COLON_RESOURCE_NAME,
        }),
      },
    };
    // The key encrypts EKS secrets and backups too: CloudWatch may use it for boa's alarms alone (found
    // in review: the grant had no condition).
    props.key.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'AllowBoaAlarmsToEncryptNotifications',
        principals: [cloudwatchAlarms],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        conditions: boaAlarmsOnly,
      }),
    );
    this.topic.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'AllowBoaAlarmsToPublish',
        principals: [cloudwatchAlarms],
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions: boaAlarmsOnly,
      }),
    );
    if (props.alarmEmail) this.topic.addSubscription(new subscriptions.EmailSubscription(props.alarmEmail));

    // paid average - 1.1 x window budget > 0, both averaged over the same 5 minutes: the rule GET /v1/budget,
    // boa's dashboard and /metrics use, so a deep cut does not fire here while they show nothing over.
    this.overspendAlarm = new cloudwatch.Alarm(this, 'OverspendAlarm', {
      alarmName: `boa-${props.clusterName}-paid-average-over-budget`,
      alarmDescription:
        `The paid GPU-hours per hour, time-averaged over boa's budget window, exceed the budgets in force over ` +
        `that window (time-averaged) by more than ` +
        `${OVERSPEND_TOLERANCE * 100}% on cluster ${props.clusterName}.`,
      metric: new cloudwatch.MathExpression({
        expression: `paid - ${1 + OVERSPEND_TOLERANCE} * windowBudget`,
        usingMetrics: { paid: paidAverage, windowBudget },
        period: Duration.minutes(5),
        label: "Paid average above 110% of the window's budget (GPU-hours per hour)",
      }),
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      threshold: 0,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    this.overspendAlarm.addAlarmAction(new actions.SnsAction(this.topic));
    this.overspendAlarm.addOkAction(new actions.SnsAction(this.topic));

    const gpuHours = (title: string, metrics: cloudwatch.IMetric[]) =>
      new cloudwatch.GraphWidget({
        title,
        left: metrics,
        leftYAxis: { label: 'GPU-hours per hour', min: 0, showUnits: false },
        width: 12,
        height: 7,
      });

    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: `boa-${props.clusterName}`,
      defaultInterval: Duration.days(1),
    });
    this.dashboard.addWidgets(
      new cloudwatch.TextWidget({
        markdown:
          `# boa on ${props.clusterName}\nBudget against what is paid (GPU-hours per hour of rented GPUs) and ` +
          "what jobs hold; the alarm compares the paid time-average over the window with the window's budget " +
          "(the budgets in force over it), as boa's own dashboard does.",
        width: 24,
        height: 2,
      }),
    );
    // The same current numbers as the top row of boa's own dashboard (served at / by the service).
    this.dashboard.addWidgets(
      new cloudwatch.SingleValueWidget({
        title: 'Now',
        metrics: [
          budget,
          windowBudget,
          paidAverage,
          metric('AllocatedGpuHoursPerHour', 'Allocated by the plan'),
          metric('PredictedAvgJctSeconds', 'Predicted average JCT (s)'),
          metric('DesiredNodes', 'Nodes desired'),
          metric('ActualNodes', 'Nodes running'),
        ],
        width: 24,
        height: 3,
      }),
    );
    this.dashboard.addWidgets(
      gpuHours('Budget vs paid and allocated', [
        budget,
        metric('PaidGpuHoursPerHour', 'Paid'),
        metric('AllocatedGpuHoursPerHour', 'Allocated by the plan'),
        paidAverage,
        windowBudget,
      ]),
      new cloudwatch.AlarmWidget({
        title: 'Paid average over budget',
        alarm: this.overspendAlarm,
        width: 12,
        height: 7,
      }),
    );
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'GPU nodes',
        left: [metric('DesiredNodes', 'Desired'), metric('ActualNodes', 'Actual')],
        leftYAxis: { label: 'nodes', min: 0, showUnits: false },
        width: 8,
        height: 6,
      }),
      new cloudwatch.GraphWidget({
        title: 'Jobs',
        left: [metric('JobsRunning', 'Running'), metric('JobsWaiting', 'Waiting')],
        leftYAxis: { label: 'jobs', min: 0, showUnits: false },
        width: 8,
        height: 6,
      }),
      new cloudwatch.GraphWidget({
        title: 'Predicted average job completion time',
        left: [metric('PredictedAvgJctSeconds', 'Predicted average JCT')],
        leftYAxis: { label: 'seconds', min: 0, showUnits: false },
        width: 8,
        height: 6,
      }),
    );
    // How the budget is held (spend ceiling, load, queue) and how the node group behaves (issues 11, 14).
    this.dashboard.addWidgets(
      gpuHours('Budget control', [
        budget,
        metric('LoadNeedsGpuHoursPerHour', 'Budget the current load needs'),
        metric('SpendCeilingGpus', 'Spend ceiling (GPUs)'),
      ]),
      new cloudwatch.GraphWidget({
        title: 'Queue and heartbeat',
        left: [metric('JobsQueuedForBudget', 'Jobs queued for the budget')],
        right: [metric('Heartbeat', 'Heartbeat (ticks)', cloudwatch.Stats.SAMPLE_COUNT)],
        leftYAxis: { label: 'jobs', min: 0, showUnits: false },
        width: 6,
        height: 7,
      }),
      new cloudwatch.GraphWidget({
        title: 'Node group health',
        left: [
          metric('CapacityBackoff', 'Capacity backoff (1 = backing off)', cloudwatch.Stats.MAXIMUM),
          metric('NodeLaunchFailures', 'Launch failures', cloudwatch.Stats.MAXIMUM),
          metric('NodesProvisionTimedOut', 'Nodes never ready', cloudwatch.Stats.MAXIMUM),
          metric('NodeDriftCorrections', 'Drift corrections', cloudwatch.Stats.MAXIMUM),
          metric('NodesRemoving', 'Nodes being removed', cloudwatch.Stats.MAXIMUM),
        ],
        leftYAxis: { min: 0, showUnits: false },
        width: 6,
        height: 7,
      }),
    );
    this.dashboard.addWidgets(
      new cloudwatch.TextWidget({
        markdown:
          "The frontier (what each budget buys, with the budget and the plan marked), the plan's widths and " +
          "the last resizes are on boa's own dashboard, served by the service at `/` " +
          '(`kubectl -n boa port-forward svc/boa-internal 8080:8080`, then http://localhost:8080/).',
        width: 24,
        height: 2,
      }),
    );
  }
}
