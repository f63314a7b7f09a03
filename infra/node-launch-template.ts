import * as ec2 from 'aws-cdk-lib/aws-ec2';
import type * as eks from 'aws-cdk-lib/aws-eks-v2';
import type { Construct } from 'constructs';

/**
 * The launch template of a boa node group (system and GPU alike): IMDSv2 only, with a hop limit of 1, and
 * an encrypted gp3 root volume of the given size (EKS takes the disk from here once a template is given).
 *
 * A pod's request to the instance metadata service is one hop more than the node's, so it never gets a
 * token and no pod can borrow the node's AWS role; host-network DaemonSets (VPC CNI, kube-proxy, the Pod
 * Identity agent) still can. Every pod that calls AWS gets its credentials otherwise: boa and the EBS CSI
 * controller through EKS Pod Identity (cluster.ts, iam.ts), and the EBS CSI driver reads its instance
 * facts from the Kubernetes API when IMDS is out of reach (its docs/install.md, "Kubernetes Metadata").
 */
export function nodeLaunchTemplate(scope: Construct, id: string, diskGiB: number): eks.LaunchTemplateSpec {
  const launchTemplate = new ec2.CfnLaunchTemplate(scope, id, {
    launchTemplateData: {
      metadataOptions: { httpEndpoint: 'enabled', httpTokens: 'required', httpPutResponseHopLimit: 1 },
      blockDeviceMappings: [
        {
          deviceName: '/dev/xvda',
          ebs: { volumeSize: diskGiB, volumeType: 'gp3', encrypted: true, deleteOnTermination: true },
        },
      ],
    },
  });
  return { id: launchTemplate.ref, version: launchTemplate.attrLatestVersionNumber };
}
