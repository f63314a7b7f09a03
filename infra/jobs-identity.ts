import * as eks from 'aws-cdk-lib/aws-eks-v2';
import { Construct } from 'constructs';
import { JOBS_SERVICE_ACCOUNT, jobsServiceAccountManifest } from './k8s/jobs-service-account.ts';

export interface JobsIdentityProps {
  readonly cluster: eks.ICluster;
  /** The jobs' namespace (made by the workload). */
  readonly namespace: string;
  /** The operator's role (context jobsRoleArn); its trust policy is theirs to write (docs/deploy.md). */
  readonly roleArn: string;
}

/**
 * The jobs' IAM role (e.g. S3 for checkpoints): a service account in the jobs' namespace, associated with
 * an existing role through EKS Pod Identity, as boa's own is. The cluster has no OIDC provider, so IRSA's
 * role annotation would give the pods nothing.
 */
export class JobsIdentity extends Construct {
  readonly serviceAccount: eks.KubernetesManifest;
  readonly serviceAccountName = JOBS_SERVICE_ACCOUNT;

  constructor(scope: Construct, id: string, props: JobsIdentityProps) {
    super(scope, id);
    new eks.CfnPodIdentityAssociation(this, 'Association', {
      clusterName: props.cluster.clusterName,
      namespace: props.namespace,
      serviceAccount: JOBS_SERVICE_ACCOUNT,
      roleArn: props.roleArn,
    });
    this.serviceAccount = new eks.KubernetesManifest(this, 'ServiceAccount', {
      cluster: props.cluster,
      manifest: [jobsServiceAccountManifest(props.namespace)],
    });
  }
}
