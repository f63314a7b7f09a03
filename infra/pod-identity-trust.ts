import * as iam from 'aws-cdk-lib/aws-iam';

/** Where a Pod Identity role may be used: one service account of one cluster. */
export interface PodIdentityScope {
  readonly clusterArn: string;
  readonly namespace: string;
  readonly serviceAccount: string;
}

/**
 * The trust policy of an EKS Pod Identity role, narrowed by the session tags EKS Pod Identity sets on
 * every assume (on unless an association disables them). The tags (eks-cluster-arn, eks-cluster-name,
 * kubernetes-namespace, kubernetes-service-account, kubernetes-pod-name, kubernetes-pod-uid) are listed in
 * "List of session tags added by EKS Pod Identity",
 * https://docs.aws.amazon.com/eks/latest/userguide/pod-id-abac.html; conditions on them in a role's trust,
 * https://docs.aws.amazon.com/eks/latest/userguide/pod-id-role.html. The CDK's trusts pods.eks.amazonaws.com with no
 * condition, so any Pod Identity association in the account, for any cluster, namespace or service
 * account, could hand the role to its pods (found in a deploy review): for boa's, the power to terminate
 * the GPU nodes and to read the operator token.
 */
export function podIdentityTrustPolicy(scope: PodIdentityScope): Record<string, unknown> {
  return {
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Principal: { Service: 'pods.eks.amazonaws.com' },
        Action: ['sts:AssumeRole', 'sts:TagSession'],
        Condition: {
          StringEquals: {
            'aws:RequestTag/eks-cluster-arn': scope.clusterArn,
            'aws:RequestTag/kubernetes-namespace': scope.namespace,
            'aws:RequestTag/kubernetes-service-account': scope.serviceAccount,
          },
        },
      },
    ],
  };
}

/** Replaces a Pod Identity role's trust policy with podIdentityTrustPolicy(scope). */
export function restrictPodIdentityTrust(role: iam.IRole, scope: PodIdentityScope): void {
  const cfnRole = role.node.defaultChild;
  if (!(cfnRole instanceof iam.CfnRole)) {
    throw new Error(
      `${role.node.path} is not a role made in this stack: its trust policy cannot be narrowed`,
    );
  }
  cfnRole.addPropertyOverride('AssumeRolePolicyDocument', podIdentityTrustPolicy(scope));
}
