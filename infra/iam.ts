import * as cdk from 'aws-cdk-lib';
import * as eks from 'aws-cdk-lib/aws-eks-v2';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { BOA_NAMESPACE, BOA_SERVICE_ACCOUNT } from './k8s/boa.ts';
import { METRICS_NAMESPACE } from './monitoring.ts';
import { PodIdentityServiceAccount } from './pod-identity-service-account.ts';
import { restrictPodIdentityTrust } from './pod-identity-trust.ts';

/**
 * Everything boa may do in AWS, and nothing more: resize its one node group and follow the update, list
 * instances (to read launch times of the group's nodes, found by the tag eks:nodegroup-name), and publish
 * metrics into its own CloudWatch namespace. No statement has a wildcard action.
 */
export interface NodegroupRefs {
  readonly nodegroupArn: string;
  /** For the tag condition on the node group's Auto Scaling group (EKS tags it eks:nodegroup-name). */
  readonly nodegroupName?: string;
  readonly clusterName?: string;
  /** For eks:ListNodegroups, to find the group again after it is replaced. */
  readonly clusterArn?: string;
}

export function boaPolicyStatements(refs: string | NodegroupRefs): iam.PolicyStatement[] {
  const { nodegroupArn, nodegroupName, clusterName, clusterArn } =
    typeof refs === 'string' ? { nodegroupArn: refs } : refs;
  return [
    ...(nodegroupName && clusterName ? nodeRemovalStatements(nodegroupName, clusterName, clusterArn) : []),
    new iam.PolicyStatement({
      sid: 'ResizeTheGpuNodegroup',
      actions: ['eks:DescribeNodegroup', 'eks:UpdateNodegroupConfig', 'eks:DescribeUpdate'],
      resources: [nodegroupArn],
    }),
    // ec2:DescribeInstances has no resource-level permissions: IAM accepts only "*" for it. It is read-only;
    // boa filters the call by the tag eks:nodegroup-name.
    new iam.PolicyStatement({
      sid: 'ListInstances',
      actions: ['ec2:DescribeInstances'],
      resources: ['*'],
    }),
    // cloudwatch:PutMetricData has no resource-level permissions either; the namespace condition confines it.
    new iam.PolicyStatement({
      sid: 'PublishBoaMetrics',
      actions: ['cloudwatch:PutMetricData'],
      resources: ['*'],
      conditions: { StringEquals: { 'cloudwatch:namespace': METRICS_NAMESPACE } },
    }),
  ];
}

/**
 * Removing the nodes boa chose (issue 11): TerminateInstanceInAutoScalingGroup and SetInstanceProtection,
 * and SuspendProcesses (AZRebalance kept suspended, so a decrementing terminate never makes the group
 * launch and drain nodes of its own), only on the Auto Scaling group EKS made for the node group. Its ARN
 * carries a UUID unknown at synth time, so the resource is "*" narrowed by the tags EKS puts on it
 * (eks:nodegroup-name, eks:cluster-name). The Describe calls have no resource-level permissions.
 */
function nodeRemovalStatements(nodegroupName: string, clusterName: string, clusterArn?: string) {
  return [
    new iam.PolicyStatement({
      sid: 'RemoveChosenGpuNodes',
      actions: [
        'autoscaling:SetInstanceProtection',
        'autoscaling:SuspendProcesses',
        'autoscaling:TerminateInstanceInAutoScalingGroup',
      ],
      resources: ['*'],
      conditions: {
        StringEquals: {
          'autoscaling:ResourceTag/eks:nodegroup-name': nodegroupName,
          'autoscaling:ResourceTag/eks:cluster-name': clusterName,
        },
      },
    }),
    new iam.PolicyStatement({
      sid: 'ReadScalingActivities',
      // The instance's lifecycle state before a Terminate (never sent twice for one removal), and the
      // group's instances the ASG itself is terminating (not counted as kept while their hook drains them).
      actions: [
        'autoscaling:DescribeScalingActivities',
        'autoscaling:DescribeAutoScalingInstances',
        'autoscaling:DescribeAutoScalingGroups',
      ],
      resources: ['*'],
    }),
    ...(clusterArn
      ? [
          // IAM lists DescribeUpdate's resource types as cluster, nodegroup and addon without saying which a
          // node group's update is authorized against: the cluster too (read-only), so following never fails.
          new iam.PolicyStatement({
            sid: 'FollowNodegroupUpdates',
            actions: ['eks:DescribeUpdate'],
            resources: [clusterArn],
          }),
          new iam.PolicyStatement({
            sid: 'FindReplacedNodegroup',
            actions: ['eks:ListNodegroups'],
            resources: [clusterArn],
          }),
          // Finding it reads each group's labels (findNodegroupsByLabels), as does the search of a run with
          // nothing stored for a group it replaced (its labels and tags: leftover-nodegroups.ts):
          // DescribeNodegroup on every node group of this cluster, read-only; resizing stays confined to
          // the configured group above.
          new iam.PolicyStatement({
            sid: 'ReadClusterNodegroups',
            actions: ['eks:DescribeNodegroup'],
            resources: [clusterNodegroupsArn(clusterArn, clusterName)],
          }),
        ]
      : []),
  ];
}

/** arn:PARTITION:eks:REGION:ACCOUNT:nodegroup/CLUSTER/*\/* from the cluster's ARN (a token at synth). */
export function clusterNodegroupsArn(clusterArn: string, clusterName: string): string {
  return cdk.Fn.join('', [
    cdk.Fn.select(0, cdk.Fn.split(':cluster/', clusterArn)),
    ':nodegroup/',
    clusterName,
    '/*/*',
  ]);
}

export interface BoaIdentityProps {
  readonly cluster: eks.Cluster;
  readonly nodegroupArn: string;
  /** With it, boa may terminate the instances it chose (nodeRemovalStatements). */
  readonly nodegroupName?: string;
}

/** boa's Kubernetes service account, bound to its IAM role through EKS Pod Identity. */
export class BoaIdentity extends Construct {
  readonly serviceAccount: PodIdentityServiceAccount;

  constructor(scope: Construct, id: string, props: BoaIdentityProps) {
    super(scope, id);
    this.serviceAccount = new PodIdentityServiceAccount(this, 'ServiceAccount', {
      cluster: props.cluster,
      name: BOA_SERVICE_ACCOUNT,
      namespace: BOA_NAMESPACE,
    });
    const refs = {
      nodegroupArn: props.nodegroupArn,
      ...(props.nodegroupName
        ? {
            nodegroupName: props.nodegroupName,
            clusterName: props.cluster.clusterName,
            clusterArn: props.cluster.clusterArn,
          }
        : {}),
    };
    for (const statement of boaPolicyStatements(refs)) {
      this.serviceAccount.role.addToPrincipalPolicy(statement);
    }
    restrictPodIdentityTrust(this.serviceAccount.role, {
      clusterArn: props.cluster.clusterArn,
      namespace: BOA_NAMESPACE,
      serviceAccount: BOA_SERVICE_ACCOUNT,
    });
  }

  get role(): iam.IRole {
    return this.serviceAccount.role;
  }
}
