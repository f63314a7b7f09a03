/**
 * Every AWS API call boa and the stack's own Lambdas send, with the IAM action it needs and the resources
 * the stack grants it on. test/infra/aws-permissions.test.ts reads the calls out of the code (each
 * `new XCommand(`, `paginateX(`, aggregated client method and AwsCustomResource call under `code`) and
 * fails when one has no row here, when a row has no call left, and when the synthesized template grants
 * a row's principal anything but exactly these actions on exactly these scopes. A call added without a
 * grant (AccessDenied only in a real account: the tests mock AWS) fails there, not in production.
 */

/** Whose calls: each is one IAM role in the template. */
export type Principal = 'boa' | 'budgetGuard' | 'boundsHandler' | 'tokenRotation' | 'deployCalls';

/**
 * Where each principal's calls are written (paths from the repository's root); a file under two is the
 * one's with the longer path (infra/budget-guard/ is the guard's, the rest of infra/ the deploy's).
 */
export const PRINCIPAL_CODE: Readonly<Record<Principal, readonly string[]>> = {
  // The service: the AWS adapters (src/cloud/aws), and anything else under src/ that may call AWS.
  boa: ['src'],
  budgetGuard: ['infra/budget-guard'],
  boundsHandler: ['infra/gpu-scaling-handler'],
  tokenRotation: ['infra/token-rotation'],
  // The CDK's AwsCustomResource calls made at deploy time (one singleton Lambda role), from any of the
  // CDK app's files.
  deployCalls: ['infra'],
};

/** The resources a grant names. */
export type Scope =
  /** The GPU node group's own ARN. */
  | 'nodegroup'
  /** Every node group of boa's cluster (arn:...:nodegroup/CLUSTER/*\/*): read-only calls only. */
  | 'clusterNodegroups'
  /** The cluster's ARN. */
  | 'cluster'
  /** "*" narrowed by the tags EKS puts on the GPU group's Auto Scaling group (its name has a UUID). */
  | 'gpuAsgByTags'
  /** The operator token's secret. */
  | 'tokenSecret'
  /** "*" narrowed to boa's CloudWatch namespace (cloudwatch:namespace). */
  | 'boaNamespace'
  /** "*": IAM has no resource-level permissions for the action. */
  | 'any';

export interface AwsCall {
  readonly principal: Principal;
  /** The IAM action: `prefix:Operation` (for every call here the action is named as the API operation). */
  readonly action: string;
  /** Exactly the scopes the template grants it on. */
  readonly scopes: readonly Scope[];
}

/** The IAM prefix of each AWS SDK v3 client package the code may import. */
export const IAM_PREFIX: Readonly<Record<string, string>> = {
  '@aws-sdk/client-eks': 'eks',
  '@aws-sdk/client-auto-scaling': 'autoscaling',
  '@aws-sdk/client-cloudwatch': 'cloudwatch',
  '@aws-sdk/client-ec2': 'ec2',
  '@aws-sdk/client-secrets-manager': 'secretsmanager',
};

export const AWS_CALLS: readonly AwsCall[] = [
  // boa: resize its node group and follow the update (src/cloud/aws/eks-nodegroup.ts). DescribeUpdate on
  // the cluster too: IAM lists cluster, nodegroup and addon for it without saying which a node group's
  // update is checked against. DescribeNodegroup and ListNodegroups on the cluster's groups: a replaced
  // group is found by its labels and tags (leftover-nodegroups.ts).
  { principal: 'boa', action: 'eks:DescribeNodegroup', scopes: ['nodegroup', 'clusterNodegroups'] },
  { principal: 'boa', action: 'eks:UpdateNodegroupConfig', scopes: ['nodegroup'] },
  { principal: 'boa', action: 'eks:DescribeUpdate', scopes: ['nodegroup', 'cluster'] },
  { principal: 'boa', action: 'eks:ListNodegroups', scopes: ['cluster'] },
  // The group's instances and launch times, filtered by the tag eks:nodegroup-name (ec2-nodes.ts).
  { principal: 'boa', action: 'ec2:DescribeInstances', scopes: ['any'] },
  // Removing the nodes boa chose, scale-in protection, AZRebalance kept suspended (asg.ts).
  { principal: 'boa', action: 'autoscaling:TerminateInstanceInAutoScalingGroup', scopes: ['gpuAsgByTags'] },
  { principal: 'boa', action: 'autoscaling:SetInstanceProtection', scopes: ['gpuAsgByTags'] },
  { principal: 'boa', action: 'autoscaling:SuspendProcesses', scopes: ['gpuAsgByTags'] },
  { principal: 'boa', action: 'autoscaling:DescribeAutoScalingGroups', scopes: ['any'] },
  { principal: 'boa', action: 'autoscaling:DescribeAutoScalingInstances', scopes: ['any'] },
  { principal: 'boa', action: 'autoscaling:DescribeScalingActivities', scopes: ['any'] },
  { principal: 'boa', action: 'cloudwatch:PutMetricData', scopes: ['boaNamespace'] },
  { principal: 'boa', action: 'secretsmanager:GetSecretValue', scopes: ['tokenSecret'] },

  // The budget guard (infra/budget-guard/): reads and lowers the group, counts a replaced group's nodes,
  // lifts boa's scale-in protection, reads boa's heartbeat and budget, reports itself.
  { principal: 'budgetGuard', action: 'eks:DescribeNodegroup', scopes: ['nodegroup', 'clusterNodegroups'] },
  { principal: 'budgetGuard', action: 'eks:UpdateNodegroupConfig', scopes: ['nodegroup'] },
  { principal: 'budgetGuard', action: 'eks:ListNodegroups', scopes: ['cluster'] },
  { principal: 'budgetGuard', action: 'autoscaling:DescribeAutoScalingGroups', scopes: ['any'] },
  { principal: 'budgetGuard', action: 'autoscaling:SetInstanceProtection', scopes: ['gpuAsgByTags'] },
  { principal: 'budgetGuard', action: 'cloudwatch:GetMetricStatistics', scopes: ['any'] },
  { principal: 'budgetGuard', action: 'cloudwatch:PutMetricData', scopes: ['boaNamespace'] },

  // The node group's bounds at deploy (infra/gpu-scaling-handler/).
  { principal: 'boundsHandler', action: 'eks:DescribeNodegroup', scopes: ['nodegroup'] },
  { principal: 'boundsHandler', action: 'eks:UpdateNodegroupConfig', scopes: ['nodegroup'] },

  // The operator token's rotation (infra/token-rotation/): the CDK's rotation grant, on the one secret.
  { principal: 'tokenRotation', action: 'secretsmanager:DescribeSecret', scopes: ['tokenSecret'] },
  { principal: 'tokenRotation', action: 'secretsmanager:GetSecretValue', scopes: ['tokenSecret'] },
  { principal: 'tokenRotation', action: 'secretsmanager:PutSecretValue', scopes: ['tokenSecret'] },
  { principal: 'tokenRotation', action: 'secretsmanager:UpdateSecretVersionStage', scopes: ['tokenSecret'] },

  // The Auto Scaling group's metrics turned on at deploy (infra/asg-metrics.ts).
  { principal: 'deployCalls', action: 'eks:DescribeNodegroup', scopes: ['nodegroup'] },
  { principal: 'deployCalls', action: 'autoscaling:EnableMetricsCollection', scopes: ['gpuAsgByTags'] },
];

/**
 * Granted by the CDK itself, though no code of boa's sends it: the rotation grant of every CDK rotation
 * function (nag.ts says why it stays). Anything else a principal is granted beyond AWS_CALLS fails the test.
 */
export const CDK_OWN_GRANTS: readonly AwsCall[] = [
  { principal: 'tokenRotation', action: 'secretsmanager:GetRandomPassword', scopes: ['any'] },
];
