import * as eks from 'aws-cdk-lib/aws-eks-v2';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { BOA_NAMESPACE, BOA_SERVICE_ACCOUNT } from './k8s/boa.ts';
import { METRICS_NAMESPACE } from './monitoring.ts';

/**
 * Everything boa may do in AWS, and nothing more: resize its one node group and follow the update, list
 * instances (to read launch times of the group's nodes, found by the tag eks:nodegroup-name), and publish
 * metrics into its own CloudWatch namespace. No statement has a wildcard action.
 */
export function boaPolicyStatements(nodegroupArn: string): iam.PolicyStatement[] {
  return [
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

export interface BoaIdentityProps {
  readonly cluster: eks.Cluster;
  readonly nodegroupArn: string;
}

/** boa's Kubernetes service account, bound to its IAM role through EKS Pod Identity. */
export class BoaIdentity extends Construct {
  readonly serviceAccount: eks.ServiceAccount;

  constructor(scope: Construct, id: string, props: BoaIdentityProps) {
    super(scope, id);
    this.serviceAccount = new eks.ServiceAccount(this, 'ServiceAccount', {
      cluster: props.cluster,
      name: BOA_SERVICE_ACCOUNT,
      namespace: BOA_NAMESPACE,
      identityType: eks.IdentityType.POD_IDENTITY,
    });
    for (const statement of boaPolicyStatements(props.nodegroupArn)) {
      this.serviceAccount.addToPrincipalPolicy(statement);
    }
  }

  get role(): iam.IRole {
    return this.serviceAccount.role;
  }
}
