import { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { type Sleep, systemClock } from '../time.ts';
import type { Clock, MetricsSink, NodePool } from '../../service/ports.ts';
import { type AwsClients, createAwsClients } from './clients.ts';
import type { ClusterNodes } from './cluster-nodes.ts';
import { KubeClusterNodes } from './kube-cluster-nodes.ts';
import { CloudWatchSink } from './cloudwatch-sink.ts';
import { EksNodePool } from './eks-node-pool.ts';

/**
 * The AWS adapters. Kept apart from ../index.ts so that the local default never loads the AWS SDK
 * (the service imports this module only with cloud "aws").
 */
export { type AwsClients, createAwsClients } from './clients.ts';
export { batchMetricData, MAX_METRICS_PER_REQUEST, MAX_REQUEST_BYTES } from './cloudwatch-batches.ts';
export { CloudWatchSink, type CloudWatchSinkOptions } from './cloudwatch-sink.ts';
export { type ClusterNode, type ClusterNodes, instanceIdFromProviderId } from './cluster-nodes.ts';
export { listNodegroupInstances, nodegroupFilters } from './ec2-nodes.ts';
export { KubeClusterNodes } from './kube-cluster-nodes.ts';
export { EksNodePool, type EksNodePoolConfig, type EksNodePoolDeps } from './eks-node-pool.ts';
export { secretTokenSource, tokenFromSecretString } from './token-secret.ts';

/** The parts of the service configuration (src/service/config.ts) the AWS adapters use. */
export interface AwsAdapterConfig {
  readonly gpusPerNode: number;
  /** BOA_INSTANCE_TYPE: a node group of another GPU count is not raised (instance-type-check.ts). */
  readonly instanceType?: string;
  /** The operator's hard cap on nodes, below the node group's maxSize. */
  readonly maxNodes?: number;
  readonly aws?: { readonly region?: string; readonly clusterName: string; readonly nodegroupName: string };
}

export interface AwsAdapterDeps {
  readonly clock?: Clock;
  /** How the node pool waits between polls and retries (tests move a fake clock instead). */
  readonly sleep?: Sleep;
  /** Default: createAwsClients(config.aws.region). */
  readonly clients?: AwsClients;
  /** Kubernetes' view of the nodes (a Node watch); without it nodes are ready at EC2 running. */
  readonly nodes?: ClusterNodes;
}

/** The dimension on every boa metric (infra/monitoring.ts's dashboard and alarm select by it). */
export const METRICS_DIMENSION = 'Cluster';

function awsSettings(config: AwsAdapterConfig) {
  if (!config.aws) throw new RangeError('cloud "aws" needs aws.clusterName and aws.nodegroupName');
  return config.aws;
}

/** The EKS managed node group named in the configuration, as the service's node pool. */
export function createAwsNodePool(
  config: AwsAdapterConfig,
  logger: Logger,
  deps: AwsAdapterDeps = {},
): NodePool {
  const aws = awsSettings(config);
  const clients = deps.clients ?? createAwsClients(aws.region);
  return new EksNodePool(
    {
      ...aws,
      gpusPerNode: config.gpusPerNode,
      hardCap: config.maxNodes,
      ...(config.instanceType ? { instanceType: config.instanceType } : {}),
    },
    {
      eks: clients.eks,
      ec2: clients.ec2,
      ...(clients.autoscaling ? { autoscaling: clients.autoscaling } : {}),
      ...nodesOption(deps, logger),
      logger,
      ...(deps.clock ? { clock: deps.clock } : {}),
      ...(deps.sleep ? { sleep: deps.sleep } : {}),
    },
  );
}

/**
 * Kubernetes' view of the nodes: given (tests), or a Node watch when boa runs in the cluster (the
 * service account's ClusterRole lets it list, watch and patch nodes, never get one by name). Elsewhere
 * (a laptop against a real account) nodes count as ready at EC2 running, and that is logged.
 */
function nodesOption(deps: AwsAdapterDeps, logger: Logger): { nodes?: ClusterNodes } {
  if (deps.nodes) return { nodes: deps.nodes };
  if (!process.env.KUBERNETES_SERVICE_HOST) {
    logger.warn(
      { event: 'nodes.no-kubernetes' },
      'not running in a Kubernetes cluster: nodes count as ready at EC2 running, not Kubernetes Ready',
    );
    return {};
  }
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromCluster();
  return { nodes: new KubeClusterNodes(kubeConfig, { logger, clock: deps.clock ?? systemClock }) };
}

/** CloudWatch metrics in namespace 'boa', each with the dimension Cluster = the cluster's name. */
export function createAwsMetricsSink(
  config: AwsAdapterConfig,
  logger: Logger,
  deps: { readonly clients?: Pick<AwsClients, 'cloudwatch'> } = {},
): MetricsSink {
  const aws = awsSettings(config);
  const clients = deps.clients ?? createAwsClients(aws.region);
  return new CloudWatchSink({
    client: clients.cloudwatch,
    namespace: 'boa',
    dimensions: { [METRICS_DIMENSION]: aws.clusterName },
    logger,
  });
}
