import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import type { Logger } from 'pino';
import { type AwsAdapterConfig, type AwsAdapterDeps, createAwsNodePool } from '../../src/cloud/aws/index.ts';
import type { Sleep } from '../../src/cloud/time.ts';
import type { Clock } from '../../src/service/ports.ts';
import type { EmulatedNodegroup } from '../cloud/emulated-nodegroup.ts';

/** The real AWS node pool over an emulated node group's mocked SDK clients (CloudWatch unused). */
export function poolOnEmulatedGroup(
  config: AwsAdapterConfig,
  logger: Logger,
  group: EmulatedNodegroup,
  clock: Clock,
  nodes?: AwsAdapterDeps['nodes'],
  sleep?: Sleep,
) {
  return createAwsNodePool(config, logger, {
    clients: {
      eks: group.eks,
      ec2: group.ec2,
      autoscaling: group.autoscaling,
      cloudwatch: new CloudWatchClient({ region: 'us-east-1' }),
    },
    clock,
    nodes,
    ...(sleep ? { sleep } : {}),
  });
}
