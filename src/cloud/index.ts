import type { Logger } from 'pino';
import type { Clock, MetricsSink, NodePool } from '../service/ports.ts';
import { type AwsClients, createAwsClients } from './aws/clients.ts';
import { CloudWatchSink } from './aws/cloudwatch-sink.ts';
import { EksNodePool } from './aws/eks-node-pool.ts';
import { LocalNodePool } from './local/local-node-pool.ts';
import type { LocalPoolSnapshot } from './local/local-pool-state.ts';
import { LogMetricsSink } from './log-sink.ts';

export { type AwsClients, createAwsClients } from './aws/clients.ts';
export { batchMetricData, MAX_METRICS_PER_REQUEST, MAX_REQUEST_BYTES } from './aws/cloudwatch-batches.ts';
export { CloudWatchSink, type CloudWatchSinkOptions } from './aws/cloudwatch-sink.ts';
export { EksNodePool, type EksNodePoolConfig, type EksNodePoolDeps } from './aws/eks-node-pool.ts';
export { clampToBounds } from './bounds.ts';
export { CloudError } from './errors.ts';
export { LocalNodePool, type LocalPoolOptions } from './local/local-node-pool.ts';
export { type LocalPoolConfig, LocalPoolError, type LocalPoolSnapshot } from './local/local-pool-state.ts';
export { LogMetricsSink } from './log-sink.ts';
export { AwsCallError, classifyAwsError, DEFAULT_RETRY, type ErrorKind, type RetryPolicy } from './retry.ts';
export { realSleep, type Sleep, systemClock } from './time.ts';

/** The parts of the service configuration (src/service/config.ts) that choose and shape the adapters. */
export interface CloudAdapterConfig {
  readonly cloud: 'local' | 'aws';
  readonly gpusPerNode: number;
  /** The operator's hard cap on nodes. */
  readonly maxNodes?: number;
  readonly local: {
    readonly maxNodes: number;
    readonly bootSeconds: number;
    readonly releaseSeconds: number;
  };
  readonly aws?: { readonly region?: string; readonly clusterName: string; readonly nodegroupName: string };
}

export interface CloudAdapterDeps {
  readonly clock: Clock;
  readonly logger: Logger;
  /** Local only: the pool's last stored snapshot (LocalNodePool.toJSON()), to restore after a restart. */
  readonly localSnapshot?: unknown;
  /** Local only: store each new snapshot (in the same step as the decision that caused it). */
  readonly onLocalPoolChange?: (snapshot: LocalPoolSnapshot) => void;
  /** AWS only: clients to use instead of createAwsClients(region). */
  readonly awsClients?: AwsClients;
}

/**
 * The node pool and metrics sink for a configuration: an emulated pool and log metrics for 'local';
 * the EKS node group, EC2 and CloudWatch (namespace 'boa', no dimensions) for 'aws'.
 */
export function createCloudAdapters(
  config: CloudAdapterConfig,
  deps: CloudAdapterDeps,
): { pool: NodePool; metrics: MetricsSink } {
  if (config.cloud === 'local') {
    const maxSize = Math.min(config.local.maxNodes, config.maxNodes ?? Infinity);
    const { bootSeconds, releaseSeconds } = config.local;
    const poolConfig = { minSize: 0, maxSize, bootSeconds, releaseSeconds, gpusPerNode: config.gpusPerNode };
    const options = { logger: deps.logger, onChange: deps.onLocalPoolChange };
    const pool =
      deps.localSnapshot === undefined
        ? new LocalNodePool(poolConfig, deps.clock, options)
        : LocalNodePool.fromJSON(poolConfig, deps.localSnapshot, deps.clock, options);
    return { pool, metrics: new LogMetricsSink(deps.logger) };
  }
  if (!config.aws) throw new RangeError('cloud "aws" needs aws.clusterName and aws.nodegroupName');
  const clients = deps.awsClients ?? createAwsClients(config.aws.region);
  const pool = new EksNodePool(
    { ...config.aws, gpusPerNode: config.gpusPerNode, hardCap: config.maxNodes },
    { eks: clients.eks, ec2: clients.ec2, clock: deps.clock, logger: deps.logger },
  );
  return { pool, metrics: new CloudWatchSink({ client: clients.cloudwatch, logger: deps.logger }) };
}
