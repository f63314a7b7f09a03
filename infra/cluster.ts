import { KubectlV36Layer } from '@aws-cdk/lambda-layer-kubectl-v36';
import { RemovalPolicy } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as eks from 'aws-cdk-lib/aws-eks-v2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { nodeLaunchTemplate } from './node-launch-template.ts';
import { restrictPodIdentityTrust } from './pod-identity-trust.ts';

/** Kubernetes minor version; the kubectl layer above must stay within one minor version of it. */
export const KUBERNETES_VERSION = eks.KubernetesVersion.V1_36;

/** Label that tells boa's own pods (system) from training pods (gpu). */
export const NODE_ROLE_LABEL = 'boa/node-role';

export interface BoaClusterProps {
  readonly vpc: ec2.IVpc;
  readonly clusterName: string;
  /** CIDRs allowed to reach the public API endpoint; empty means any address (IAM still authenticates). */
  readonly allowedApiCidrs: readonly string[];
  /** Extra IAM user or role given cluster-admin. */
  /** The only principals that may assume the cluster-admin role. */
  readonly adminPrincipalArns: readonly string[];
}

/**
 * The EKS cluster (aws-eks-v2: native AWS::EKS::Cluster, access entries, no Auto Mode), its control-plane
 * logs, the small on-demand system node group that runs boa, and the cluster add-ons boa needs: the Pod
 * Identity agent (boa's AWS credentials) and the EBS CSI driver (boa's persistent volume).
 */
export class BoaCluster extends Construct {
  readonly cluster: eks.Cluster;
  readonly systemNodegroup: eks.Nodegroup;
  readonly ebsCsiAddon: eks.CfnAddon;
  /** Role any admin of the account can assume to run kubectl (cluster-admin through an access entry). */
  readonly adminRole: iam.Role;
  /** Customer-managed key for Kubernetes Secrets (envelope encryption) and the alarm topic. */
  readonly key: kms.Key;

  constructor(scope: Construct, id: string, props: BoaClusterProps) {
    super(scope, id);

    this.key = new kms.Key(this, 'Key', {
      description: `boa (${props.clusterName}): Kubernetes Secrets envelope encryption and alarm notifications`,
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.DESTROY,
    });

    // EKS writes control-plane logs to this fixed name; creating it first gives it a retention period.
    const controlPlaneLogs = new logs.LogGroup(this, 'ControlPlaneLogs', {
      logGroupName: `/aws/eks/${props.clusterName}/cluster`,
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });

    this.adminRole = new iam.Role(this, 'AdminRole', {
      assumedBy: new iam.CompositePrincipal(
        ...props.adminPrincipalArns.map((arn) => new iam.ArnPrincipal(arn)),
      ),
      description: `kubectl access to the ${props.clusterName} EKS cluster (cluster-admin)`,
    });

    // Never open to 0.0.0.0/0: the context requires allowedApiCidrs.
    if (props.allowedApiCidrs.length === 0) throw new Error('allowedApiCidrs is required');
    const endpointAccess = eks.EndpointAccess.PUBLIC_AND_PRIVATE.onlyFrom(...props.allowedApiCidrs);

    this.cluster = new eks.Cluster(this, 'Cluster', {
      clusterName: props.clusterName,
      version: KUBERNETES_VERSION,
      vpc: props.vpc,
      vpcSubnets: [{ subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS }],
      // Managed node groups only: no Auto Mode, no default capacity, and no cluster autoscaler, because
      // boa alone sets the GPU node group's desired size.
      defaultCapacityType: eks.DefaultCapacityType.NODEGROUP,
      defaultCapacity: 0,
      endpointAccess,
      clusterLogging: [
        eks.ClusterLoggingTypes.API,
        eks.ClusterLoggingTypes.AUDIT,
        eks.ClusterLoggingTypes.AUTHENTICATOR,
        eks.ClusterLoggingTypes.CONTROLLER_MANAGER,
        eks.ClusterLoggingTypes.SCHEDULER,
      ],
      secretsEncryptionKey: this.key,
      mastersRole: this.adminRole,
      kubectlProviderOptions: {
        kubectlLayer: new KubectlV36Layer(this, 'KubectlLayer'),
      },
    });
    this.cluster.node.addDependency(controlPlaneLogs);

    this.systemNodegroup = this.cluster.addNodegroupCapacity('System', {
      instanceTypes: [new ec2.InstanceType('t3.medium')],
      amiType: eks.NodegroupAmiType.AL2023_X86_64_STANDARD,
      capacityType: eks.CapacityType.ON_DEMAND,
      // Fixed size (one node per zone): nothing scales it, so a desired size in the template is harmless.
      minSize: 2,
      desiredSize: 2,
      maxSize: 2,
      // boa's pod, CoreDNS and the EBS CSI controller run here: none may borrow the node's role.
      launchTemplateSpec: nodeLaunchTemplate(this, 'SystemLaunchTemplate', 30),
      labels: { [NODE_ROLE_LABEL]: 'system' },
      subnets: { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
    });

    // The EBS CSI driver provisions boa's volume; it gets AWS credentials through EKS Pod Identity.
    const agent = this.cluster.eksPodIdentityAgent;
    const ebsCsiRole = new iam.Role(this, 'EbsCsiRole', {
      assumedBy: new iam.ServicePrincipal('pods.eks.amazonaws.com').withSessionTags(),
      description: 'EBS CSI driver controller (EKS Pod Identity)',
      managedPolicies: [iam.ManagedPolicy.fromAwsManagedPolicyName('service-role/AmazonEBSCSIDriverPolicy')],
    });
    // Only the controller's service account (the add-on's association is in kube-system) in this cluster
    // may assume it: unconditioned, any Pod Identity association in the account could hand its pods the
    // power to create, attach and delete EBS volumes (found in review).
    restrictPodIdentityTrust(ebsCsiRole, {
      clusterArn: this.cluster.clusterArn,
      namespace: 'kube-system',
      serviceAccount: 'ebs-csi-controller-sa',
    });
    this.ebsCsiAddon = new eks.CfnAddon(this, 'EbsCsiAddon', {
      clusterName: this.cluster.clusterName,
      addonName: 'aws-ebs-csi-driver',
      resolveConflicts: 'OVERWRITE',
      podIdentityAssociations: [{ roleArn: ebsCsiRole.roleArn, serviceAccount: 'ebs-csi-controller-sa' }],
    });
    // The VPC CNI's network-policy agent enforces the NetworkPolicies of boa's and the jobs' namespaces.
    const vpcCni = new eks.CfnAddon(this, 'VpcCniAddon', {
      clusterName: this.cluster.clusterName,
      addonName: 'vpc-cni',
      resolveConflicts: 'OVERWRITE',
      configurationValues: JSON.stringify({ enableNetworkPolicy: 'true' }),
    });
    vpcCni.node.addDependency(this.cluster);
    // Node auto-repair (the GPU node group) learns of a failed GPU (XID errors) only from this agent's
    // AcceleratedHardwareReady condition; without it, it reacts to NotReady alone. A DaemonSet on every
    // node (it tolerates all taints), no IAM role.
    const nodeMonitoring = new eks.CfnAddon(this, 'NodeMonitoringAgentAddon', {
      clusterName: this.cluster.clusterName,
      addonName: 'eks-node-monitoring-agent',
      resolveConflicts: 'OVERWRITE',
    });
    nodeMonitoring.node.addDependency(this.systemNodegroup);
    // Add-ons run on the system nodes; the EBS CSI controller also needs the agent for credentials.
    this.ebsCsiAddon.node.addDependency(this.systemNodegroup);
    if (agent) {
      agent.node.addDependency(this.systemNodegroup);
      this.ebsCsiAddon.node.addDependency(agent);
    }
  }
}
