import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as cr from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';

/** The Auto Scaling group metrics turned on (1-minute, free of charge): the alarm reads the first. */
export const GROUP_METRICS = [
  'GroupInServiceInstances',
  'GroupDesiredCapacity',
  'GroupPendingInstances',
  'GroupTotalInstances',
] as const;

export interface NodegroupAsgMetricsProps {
  readonly clusterName: string;
  readonly nodegroupName: string;
  readonly nodegroupArn: string;
}

/**
 * Turns on the group metrics of the GPU node group's Auto Scaling group, so AWS itself publishes how many
 * instances are in service (AWS/AutoScaling GroupInServiceInstances) whether boa runs or not.
 *
 * EKS creates and owns that group: CloudFormation neither names it nor returns it (AWS::EKS::Nodegroup has
 * no such attribute), the node group API has no metrics setting, and a launch template configures
 * instances, not the group. So the CDK app makes the two calls at deploy time, as SDK calls of the CDK's
 * AwsCustomResource: DescribeNodegroup for the group's name (`resources.autoScalingGroups[0].name`), then
 * EnableMetricsCollection on it. Both take the node group's name as a parameter, so a replaced node group
 * (new name after an instance-type change) gets its new group's metrics turned on by the same deploy.
 * Nothing is sent on delete: the group goes with its node group.
 */
export class NodegroupAsgMetrics extends Construct {
  /** The Auto Scaling group's name, resolved at deploy time: the alarm's metric dimension. */
  readonly autoScalingGroupName: string;

  constructor(scope: Construct, id: string, props: NodegroupAsgMetricsProps) {
    super(scope, id);
    const logGroup = new logs.LogGroup(this, 'Logs', { retention: logs.RetentionDays.ONE_MONTH });
    const namePath = 'nodegroup.resources.autoScalingGroups.0.name';
    const describe: cr.AwsSdkCall = {
      service: 'EKS',
      action: 'DescribeNodegroup',
      parameters: { clusterName: props.clusterName, nodegroupName: props.nodegroupName },
      physicalResourceId: cr.PhysicalResourceId.fromResponse(namePath),
      // A node group's description is larger than a custom resource may return; only the name is kept.
      outputPaths: [namePath],
    };
    const group = new cr.AwsCustomResource(this, 'Group', {
      onCreate: describe,
      onUpdate: describe,
      policy: cr.AwsCustomResourcePolicy.fromStatements([
        new iam.PolicyStatement({ actions: ['eks:DescribeNodegroup'], resources: [props.nodegroupArn] }),
      ]),
      installLatestAwsSdk: false,
      logGroup,
    });
    this.autoScalingGroupName = group.getResponseField(namePath);

    const enable: cr.AwsSdkCall = {
      service: 'AutoScaling',
      action: 'EnableMetricsCollection',
      parameters: {
        AutoScalingGroupName: this.autoScalingGroupName,
        Granularity: '1Minute',
        Metrics: [...GROUP_METRICS],
      },
      physicalResourceId: cr.PhysicalResourceId.of(`${props.nodegroupName}-group-metrics`),
    };
    new cr.AwsCustomResource(this, 'Enable', {
      onCreate: enable,
      onUpdate: enable,
      policy: cr.AwsCustomResourcePolicy.fromStatements([
        new iam.PolicyStatement({
          // Only the node group's own Auto Scaling group, by the tags EKS puts on it (its name has a UUID).
          actions: ['autoscaling:EnableMetricsCollection'],
          resources: ['*'],
          conditions: {
            StringEquals: {
              'autoscaling:ResourceTag/eks:nodegroup-name': props.nodegroupName,
              'autoscaling:ResourceTag/eks:cluster-name': props.clusterName,
            },
          },
        }),
      ]),
      installLatestAwsSdk: false,
      logGroup,
    });
  }
}
