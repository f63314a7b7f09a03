import * as eks from 'aws-cdk-lib/aws-eks-v2';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';

export interface PodIdentityServiceAccountProps {
  readonly cluster: eks.ICluster;
  readonly name: string;
  readonly namespace: string;
}

/**
 * A Kubernetes service account with an IAM role through EKS Pod Identity, and nothing for IRSA.
 * eks.ServiceAccount with IdentityType.POD_IDENTITY also writes the IRSA annotation
 * eks.amazonaws.com/role-arn: no OIDC provider or trust statement here could honour it, and the AWS SDK
 * tries IRSA's web identity before Pod Identity's container credentials. Its children keep
 * eks.ServiceAccount's ids (Role, Association, manifest-<id>ServiceAccountResource), so a stack deployed
 * with it keeps its role, association and object; the update's kubectl apply drops the annotation.
 */
export class PodIdentityServiceAccount extends Construct {
  readonly role: iam.Role;

  constructor(scope: Construct, id: string, props: PodIdentityServiceAccountProps) {
    super(scope, id);
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('pods.eks.amazonaws.com').withSessionTags(),
    });
    new eks.CfnPodIdentityAssociation(this, 'Association', {
      clusterName: props.cluster.clusterName,
      namespace: props.namespace,
      serviceAccount: props.name,
      roleArn: this.role.roleArn,
    });
    new eks.KubernetesManifest(this, `manifest-${id}ServiceAccountResource`, {
      cluster: props.cluster,
      manifest: [
        {
          apiVersion: 'v1',
          kind: 'ServiceAccount',
          metadata: {
            name: props.name,
            namespace: props.namespace,
            labels: { 'app.kubernetes.io/name': props.name },
          },
        },
      ],
    });
  }
}
