import { AutoScalingClient } from '@aws-sdk/client-auto-scaling';
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { EC2Client } from '@aws-sdk/client-ec2';
import { EKSClient } from '@aws-sdk/client-eks';

export interface AwsClients {
  readonly eks: EKSClient;
  readonly ec2: EC2Client;
  readonly cloudwatch: CloudWatchClient;
  /** Terminating the instances boa chose and scale-in protection (the node group's ASG). */
  readonly autoscaling?: AutoScalingClient;
}

/**
 * The production clients. The SDK's adaptive retry (client-side rate limiting on throttling, 3 attempts)
 * absorbs short bursts; the adapters' own retry (retry.ts) sits on top for longer throttling and for
 * errors the SDK does not retry. Requests time out after 10 s (then retried: UpdateNodegroupConfig
 * carries an idempotency token, the rest are reads or gauges). Credentials and region come from the
 * default provider chain (IRSA / pod identity on EKS) unless a region is given.
 */
export function createAwsClients(region?: string): AwsClients {
  const common = {
    ...(region ? { region } : {}),
    maxAttempts: 3,
    retryMode: 'adaptive',
    requestHandler: { connectionTimeout: 3_000, requestTimeout: 10_000 },
  } as const;
  return {
    eks: new EKSClient(common),
    ec2: new EC2Client(common),
    cloudwatch: new CloudWatchClient(common),
    autoscaling: new AutoScalingClient(common),
  };
}
