import { isServerError, isThrottlingError, isTransientError } from '@smithy/core/retry';
import { CloudCallError, type RetryContext, retrying, type RetryRules } from '../retry.ts';

/**
 * How an AWS error is handled: throttling and transient (5xx, timeouts, network) errors are retried
 * with backoff; 'in-use' (EKS ResourceInUseException: another update holds the node group) is waited
 * out by the node pool, which re-reads the group first; anything else is final.
 */
export type ErrorKind = 'throttling' | 'transient' | 'in-use' | 'fatal';

type SdkError = Parameters<typeof isThrottlingError>[0];

export function classifyAwsError(error: unknown): ErrorKind {
  if (!(error instanceof Error)) return 'fatal';
  if (error.name === 'ResourceInUseException') return 'in-use';
  const sdkError = error as SdkError;
  if (isThrottlingError(sdkError)) return 'throttling';
  // `$fault: 'server'` covers modelled server errors (EKS ServerException, ServiceUnavailableException)
  // that carry no HTTP status when constructed outside a real response.
  const fault = (error as { $fault?: string }).$fault;
  if (isTransientError(sdkError) || isServerError(sdkError) || fault === 'server') return 'transient';
  return 'fatal';
}

/** An AWS call that failed for good; `kind` says whether the caller may wait and try again. */
export class AwsCallError extends CloudCallError<ErrorKind> {
  override name = 'AwsCallError';
}

/**
 * The SDK's whole error when no region is set anywhere it looks (env, profile): every call fails with it
 * before it is sent, every tick, on a laptop run of cloud "aws" say, saying neither why nor where to set one.
 */
const NO_REGION = 'Region is missing';
const NO_REGION_HINT =
  ": boa's AWS clients have no region: set AWS_REGION, or aws.region in boa's config file, to the cluster's region";

const AWS_RULES: RetryRules<ErrorKind> = {
  system: { event: 'aws.retry', name: 'AWS' },
  classify: classifyAwsError,
  retried: new Set<ErrorKind>(['throttling', 'transient']),
  fail: (message, operation, kind, attempts, cause) => {
    const hint = cause instanceof Error && cause.message === NO_REGION ? NO_REGION_HINT : '';
    return new AwsCallError(message + hint, operation, kind, attempts, cause);
  },
};

/**
 * Runs one AWS call in boa's retry layer (src/cloud/retry.ts): throttling and transient errors retried
 * with backoff up to the policy's attempts. Fails with an AwsCallError naming the operation, the AWS
 * error and its kind.
 */
export function withRetry<T>(operation: string, call: () => Promise<T>, ctx: RetryContext): Promise<T> {
  return retrying(operation, call, ctx, AWS_RULES);
}
