import { AutoScalingClient } from '@aws-sdk/client-auto-scaling';
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { EC2Client } from '@aws-sdk/client-ec2';
import { EKSClient, type EKSClientConfig } from '@aws-sdk/client-eks';

export interface AwsClients {
  readonly eks: EKSClient;
  readonly ec2: EC2Client;
  readonly cloudwatch: CloudWatchClient;
  /** Terminating the instances boa chose and scale-in protection (the node group's ASG). */
  readonly autoscaling?: AutoScalingClient;
}

/** What every boa AWS client is built with (the Secrets Manager client too). */
export interface AwsClientOptions {
  readonly region?: string;
  /** Tests: a handler that answers without the network, and static credentials. */
  readonly requestHandler?: EKSClientConfig['requestHandler'];
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string };
}

/**
 * The SDK's side of boa's one retry layer: ONE attempt per call (maxAttempts 1), so boa's loop
 * (retry.ts, 5 attempts with jittered backoff) is the only one that retries, and a call is sent at most
 * 5 times, not 3 x 5. The adaptive mode stays on for its client-side rate limiter alone: a throttled
 * answer slows every later send of that client, even though the SDK retries nothing. Requests time out
 * after 10 s (TimeoutError, retried by boa's loop: UpdateNodegroupConfig carries an idempotency token, the
 * rest are reads or gauges). Credentials and region come from the default provider chain (IRSA / pod
 * identity on EKS) unless given.
 */
export function awsClientConfig(options: AwsClientOptions = {}) {
  return {
    ...(options.region ? { region: options.region } : {}),
    ...(options.credentials ? { credentials: { ...options.credentials } } : {}),
    maxAttempts: 1,
    retryMode: 'adaptive',
    // throwOnRequestTimeout: without it the SDK's handler only logs a warning when requestTimeout passes
    // and keeps waiting, so a request that is never answered would hang its caller (the pool's queue).
    requestHandler: options.requestHandler ?? {
      connectionTimeout: 3_000,
      requestTimeout: 10_000,
      throwOnRequestTimeout: true,
    },
  } as const;
}

/** The production clients (see awsClientConfig). */
export function createAwsClients(
  region?: string,
  options: Omit<AwsClientOptions, 'region'> = {},
): AwsClients {
  const common = awsClientConfig({ ...options, ...(region ? { region } : {}) });
  return {
    eks: new EKSClient(common),
    ec2: new EC2Client(common),
    cloudwatch: new CloudWatchClient(common),
    autoscaling: new AutoScalingClient(common),
  };
}
