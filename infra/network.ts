import { RemovalPolicy, Tags } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';

export interface NetworkProps {
  /** Two zones to pin; by default the region's first two. */
  readonly availabilityZones?: readonly [string, string];
}

/**
 * A VPC over two availability zones: public subnets hold the NAT gateway and any load balancer, private
 * subnets hold every node. One NAT gateway (not one per zone) keeps the idle cost down; nodes reach ECR,
 * EKS and CloudWatch through it.
 */
export class Network extends Construct {
  readonly vpc: ec2.Vpc;

  constructor(scope: Construct, id: string, props: NetworkProps = {}) {
    super(scope, id);
    const zones = props.availabilityZones ? [...props.availabilityZones] : undefined;
    this.vpc = new ec2.Vpc(this, 'Vpc', {
      ...(zones ? { availabilityZones: zones } : { maxAzs: 2 }),
      ipAddresses: ec2.IpAddresses.cidr('10.40.0.0/16'),
      natGateways: 1,
      subnetConfiguration: [
        { name: 'public', subnetType: ec2.SubnetType.PUBLIC, cidrMask: 24 },
        // Big private subnets: the VPC CNI gives every pod an address from the node's subnet.
        { name: 'nodes', subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 19 },
      ],
      enableDnsHostnames: true,
      enableDnsSupport: true,
    });

    // S3 traffic (training data, and ECR image layers, which ECR serves from S3) bypasses the NAT gateway
    // and its per-GB charge. Gateway endpoints are free.
    this.vpc.addGatewayEndpoint('S3', { service: ec2.GatewayVpcEndpointAwsService.S3 });

    // Rejected traffic only: enough to debug security groups, cheap next to a GPU node's data downloads.
    const flowLogGroup = new logs.LogGroup(this, 'FlowLogs', {
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.vpc.addFlowLog('RejectedFlows', {
      destination: ec2.FlowLogDestination.toCloudWatchLogs(flowLogGroup),
      trafficType: ec2.FlowLogTrafficType.REJECT,
    });

    // Tags that let Kubernetes place internet-facing and internal load balancers in the right subnets.
    for (const subnet of this.vpc.publicSubnets) Tags.of(subnet).add('kubernetes.io/role/elb', '1');
    for (const subnet of this.vpc.privateSubnets) Tags.of(subnet).add('kubernetes.io/role/internal-elb', '1');
  }
}
