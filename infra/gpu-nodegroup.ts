import * as path from 'node:path';
import { CustomResource, Duration } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as eks from 'aws-cdk-lib/aws-eks-v2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as cr from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import { NODE_ROLE_LABEL } from './cluster.ts';
import { GPU_TAINT, nvidiaDevicePluginManifest } from './k8s/device-plugin.ts';
import { nodeLaunchTemplate } from './node-launch-template.ts';

/**
 * The scaling config written into the AWS::EKS::Nodegroup resource. It never changes (whatever the context
 * says), so no later deploy has a scaling change to apply and the desired size boa set is left alone. The
 * real bounds (min 0, max from context) are applied by the GpuNodegroupBounds custom resource, which never
 * sends a desired size except to raise it to a raised minimum (it waits for boa to go below a lowered max).
 */
export const GPU_NODEGROUP_CREATE_SCALING = { minSize: 0, desiredSize: 0, maxSize: 1 } as const;

export interface GpuNodegroupProps {
  readonly cluster: eks.Cluster;
  readonly instanceType: string;
  readonly maxNodes: number;
  readonly diskGiB: number;
}

/**
 * The GPU node group boa resizes: on-demand instances of one type, the EKS-optimized AL2023 NVIDIA AMI
 * (driver and container toolkit included), min 0, tainted with boa's own key (boa.dev/gpu) so only boa's
 * pods land there, and the NVIDIA device plugin so those pods can request nvidia.com/gpu.
 */
export class GpuNodegroup extends Construct {
  readonly nodegroup: eks.Nodegroup;
  readonly bounds: CustomResource;

  constructor(scope: Construct, id: string, props: GpuNodegroupProps) {
    super(scope, id);
    const { cluster } = props;

    // Jobs must never borrow the node's AWS role through the instance metadata service. Their
    // NetworkPolicy blocks 169.254.169.254, but the VPC CNI (in its default, standard mode) applies a new
    // pod's policies a moment after it starts (found in review): the template's hop limit of 1 closes that
    // window.
    const launchTemplate = nodeLaunchTemplate(this, 'LaunchTemplate', props.diskGiB);

    this.nodegroup = cluster.addNodegroupCapacity('Gpu', {
      instanceTypes: [new ec2.InstanceType(props.instanceType)],
      amiType: eks.NodegroupAmiType.AL2023_X86_64_NVIDIA,
      capacityType: eks.CapacityType.ON_DEMAND,
      ...GPU_NODEGROUP_CREATE_SCALING,
      launchTemplateSpec: launchTemplate,
      labels: { [NODE_ROLE_LABEL]: 'gpu', 'nvidia.com/gpu.present': 'true' },
      taints: [{ key: GPU_TAINT.key, value: GPU_TAINT.value, effect: eks.TaintEffect.NO_SCHEDULE }],
      subnets: { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
      // EKS replaces nodes whose kubelet or GPU reports unhealthy (docs/nodes.md; the GPU's health comes
      // from the node monitoring agent add-on, cluster.ts); boa's own timeout (nodes.provisionSeconds)
      // covers nodes that never join.
      enableNodeAutoRepair: true,
    });

    const handler = new lambda.Function(this, 'BoundsHandler', {
      description: 'Sets the GPU node group min/max size; never lowers its desired size (boa owns that)',
      runtime: lambda.Runtime.NODEJS_24_X,
      handler: 'index.handler',
      code: lambda.Code.fromAsset(path.join(import.meta.dirname, 'gpu-scaling-handler')),
      timeout: Duration.minutes(14),
      memorySize: 256,
      logGroup: new logs.LogGroup(this, 'BoundsHandlerLogs', { retention: logs.RetentionDays.ONE_MONTH }),
    });
    handler.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['eks:DescribeNodegroup', 'eks:UpdateNodegroupConfig'],
        resources: [this.nodegroup.nodegroupArn],
      }),
    );
    const provider = new cr.Provider(this, 'BoundsProvider', {
      onEventHandler: handler,
      logGroup: new logs.LogGroup(this, 'BoundsProviderLogs', { retention: logs.RetentionDays.ONE_MONTH }),
    });
    this.bounds = new CustomResource(this, 'Bounds', {
      serviceToken: provider.serviceToken,
      resourceType: 'Custom::BoaGpuNodegroupBounds',
      properties: {
        ClusterName: cluster.clusterName,
        NodegroupName: this.nodegroup.nodegroupName,
        MinSize: 0,
        MaxSize: props.maxNodes,
      },
    });

    cluster.addManifest('NvidiaDevicePlugin', nvidiaDevicePluginManifest());
  }
}
