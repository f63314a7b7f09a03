import { type Stack, Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/** One acknowledged finding: the rule id as cdk-nag reports it and why it is accepted. */
export interface Acknowledged {
  readonly id: string;
  readonly reason: string;
}

const managed = (policy: string) =>
  `AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/${policy}]`;

const LAMBDA_LOGS = {
  id: managed('service-role/AWSLambdaBasicExecutionRole'),
  reason: 'AWS-managed policy that only lets the function write its own CloudWatch Logs.',
};

const ECR_PUBLIC_CONDITIONAL =
  'AwsSolutions-IAM4[Policy::{"Fn::If":["EksClusterKubectlProviderHandlerHasEcrPublicC426D1A5",' +
  '{"Fn::Join":["",["arn:",{"Ref":"AWS::Partition"},":iam::aws:policy/AmazonElasticContainerRegistryPublicReadOnly"]]},' +
  '{"Ref":"AWS::NoValue"}]}]';

/**
 * Every cdk-nag AwsSolutions finding on this stack, by construct path (relative to the stack), with the
 * reason it is accepted. All of them are AWS-managed policies that EKS or Lambda documents as the way to
 * grant what they need, wildcard resources on actions that IAM cannot scope, or resources the CDK's EKS
 * module creates and configures itself. test/infra/nag.test.ts fails on any finding not listed here.
 */
export const NAG_ACKNOWLEDGEMENTS: Readonly<Record<string, readonly Acknowledged[]>> = {
  'Backup/Plan/BoaVolume/Role': [
    {
      id: managed('service-role/AWSBackupServiceRolePolicyForBackup'),
      reason:
        "AWS Backup's documented role policy for taking snapshots of the selected (tagged) EBS volume; AWS maintains it.",
    },
  ],
  'Eks/Cluster/Role': [
    {
      id: managed('AmazonEKSClusterPolicy'),
      reason: 'The EKS control-plane role needs AmazonEKSClusterPolicy; AWS maintains it as EKS changes.',
    },
  ],
  'Eks/Cluster/Resource': [
    {
      id: 'CloudFormation-Validate::W9009',
      reason:
        "EncryptionConfig.Resources=['secrets'] is written by aws-eks-v2 for secretsEncryptionKey; 'secrets' is " +
        'the one resource type EKS encrypts with the key.',
    },
  ],
  // The kubectl handler is created and configured by aws-eks-v2 to apply Kubernetes manifests.
  'Eks/Cluster/KubectlProvider': [
    LAMBDA_LOGS,
    {
      id: managed('service-role/AWSLambdaVPCAccessExecutionRole'),
      reason:
        'The kubectl handler runs in the private subnets to reach the private API endpoint; this AWS-managed ' +
        'policy only manages its network interfaces.',
    },
    {
      id: managed('AmazonEC2ContainerRegistryReadOnly'),
      reason: 'Set by aws-eks-v2 on the kubectl handler (read-only ECR access for Helm OCI charts).',
    },
    {
      id: ECR_PUBLIC_CONDITIONAL,
      reason: 'Set by aws-eks-v2 on the kubectl handler in regions with ECR Public (read-only access).',
    },
    {
      id: 'AwsSolutions-IAM5[Resource::<EksClusterKubectlProviderHandlerDA75FB7A.Arn>:*]',
      reason:
        'The custom-resource framework may invoke any version of its own handler function, nothing else.',
    },
    {
      id: 'AwsSolutions-L1',
      reason:
        'aws-eks-v2 picks the kubectl handler runtime (the newest Python it knows to be available everywhere).',
    },
  ],
  'Eks/Cluster/NodegroupSystem/NodeGroupRole': nodeRole('system'),
  'Eks/Cluster/NodegroupGpu/NodeGroupRole': nodeRole('GPU'),
  'Eks/EbsCsiRole': [
    {
      id: managed('service-role/AmazonEBSCSIDriverPolicy'),
      reason:
        'The AWS-managed policy the EBS CSI driver add-on documents; AWS keeps it in step with the driver.',
    },
  ],
  'GpuNodes/BoundsHandler': [LAMBDA_LOGS],
  'GpuNodes/BoundsProvider': [
    LAMBDA_LOGS,
    {
      id: 'AwsSolutions-IAM5[Resource::<GpuNodesBoundsHandler72B998E4.Arn>:*]',
      reason:
        'The custom-resource framework may invoke any version of its own handler function, nothing else.',
    },
  ],
  'BudgetGuard/Handler': [
    LAMBDA_LOGS,
    {
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Only for cloudwatch:GetMetricStatistics and autoscaling:DescribeAutoScalingGroups (no resource-level ' +
        'permissions), cloudwatch:PutMetricData confined to the boa namespace by the cloudwatch:namespace ' +
        "condition, and autoscaling:SetInstanceProtection confined to the GPU node group's Auto Scaling group " +
        'by its eks:nodegroup-name and eks:cluster-name tags.',
    },
    {
      id: 'AwsSolutions-IAM5[Resource::{"Fn::Select":[0,{"Fn::Split":[":cluster/",{"Fn::GetAtt":["EksClusterB2BDED5B","Arn"]}]}]}:nodegroup/<EksClusterB2BDED5B>/*/*]',
      reason:
        "Only eks:DescribeNodegroup (read-only) on the node groups of boa's own cluster: a group the GPU " +
        "group replaced is found by its labels and tags, its running nodes counted; only the guarded group's size is set.",
    },
  ],
  'BudgetGuard/GroupMetrics/Enable': [
    {
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        "Only autoscaling:EnableMetricsCollection, confined to the GPU node group's Auto Scaling group by its " +
        'eks:nodegroup-name and eks:cluster-name tags (EKS names the group with a UUID unknown at synth).',
    },
  ],
  // The CDK's AwsCustomResource function (one per stack) that makes the deploy-time SDK calls.
  AWS679f53fac002430cb0da5b7982bd2287: [LAMBDA_LOGS],
  'OperatorToken/RotationHandler': [
    LAMBDA_LOGS,
    {
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Only secretsmanager:GetRandomPassword, which the CDK grants every rotation function and which has no ' +
        'resource-level permissions (it reads no secret); reading, writing and staging are on the one secret.',
    },
  ],
  'Identity/ServiceAccount/Role': [
    {
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Only for ec2:DescribeInstances, cloudwatch:PutMetricData and autoscaling:Describe*, which have no ' +
        'resource-level permissions; PutMetricData is confined by the cloudwatch:namespace=boa condition. ' +
        "Terminating and protecting instances is confined to the GPU node group's Auto Scaling group by its " +
        'eks:nodegroup-name and eks:cluster-name tags (its ARN has a UUID unknown at synth). The EKS actions ' +
        'name the node group and the cluster.',
    },
    {
      id: 'AwsSolutions-IAM5[Resource::{"Fn::Select":[0,{"Fn::Split":[":cluster/",{"Fn::GetAtt":["EksClusterB2BDED5B","Arn"]}]}]}:nodegroup/<EksClusterB2BDED5B>/*/*]',
      reason:
        "Only eks:DescribeNodegroup (read-only) on the node groups of boa's own cluster: following a replaced " +
        "GPU node group reads each group's labels; resizing stays on the configured group.",
    },
  ],
};

function nodeRole(which: string): Acknowledged[] {
  return [
    {
      id: managed('AmazonEKSWorkerNodePolicy'),
      reason: `The ${which} node group's nodes need AmazonEKSWorkerNodePolicy to join the cluster.`,
    },
    {
      id: managed('AmazonEKS_CNI_Policy'),
      reason: `The VPC CNI on the ${which} nodes assigns pod IPs with AmazonEKS_CNI_Policy (EKS's default set-up).`,
    },
    {
      id: managed('AmazonEC2ContainerRegistryReadOnly'),
      reason: `The ${which} nodes pull images (boa's from the CDK assets repository) with read-only ECR access.`,
    },
  ];
}

const OPTIONAL_CONSTRUCTS = new Set(['BudgetGuard/Handler']);

function exists(stack: Stack, relativePath: string): boolean {
  let node: IConstruct | undefined = stack;
  for (const part of relativePath.split('/')) node = node?.node.tryFindChild(part);
  return node !== undefined;
}

function find(stack: Stack, relativePath: string): IConstruct {
  let node: IConstruct = stack;
  for (const part of relativePath.split('/')) {
    const child = node.node.tryFindChild(part);
    if (!child)
      throw new Error(`cdk-nag acknowledgement: no construct at ${stack.node.path}/${relativePath}`);
    node = child;
  }
  return node;
}

/** Records the acknowledgements on their constructs (cdk-nag v3 reads them through Validations). */
export function suppressNagFindings(stack: Stack): void {
  for (const [path, rules] of Object.entries(NAG_ACKNOWLEDGEMENTS)) {
    // Optional constructs (the budget guard Lambda, off with budgetGuard=false) are acknowledged if present.
    if (OPTIONAL_CONSTRUCTS.has(path) && !exists(stack, path)) continue;
    Validations.of(find(stack, path)).acknowledge(...rules);
  }
}
