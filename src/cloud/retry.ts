import { isServerError, isThrottlingError, isTransientError } from '@smithy/core/retry';
import type { Logger } from 'pino';
import { CloudError, describeError } from './errors.ts';
import type { Sleep } from './time.ts';

/**
 * How an AWS error should be handled: throttling and transient (5xx, timeouts, network) errors are
 * retried with backoff; 'in-use' (EKS ResourceInUseException: another update holds the node group) is
 * waited out by the node pool, which re-reads the group first; anything else is final.
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

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  readonly maxAttempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

/** Throttling and transient errors: on top of the SDK's own retries (see clients.ts), so few and slow. */
export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 5, baseDelayMs: 500, maxDelayMs: 20_000 };

/**
 * Exponential backoff with "equal jitter": half the capped exponential delay is fixed, half random, so
 * callers that failed together spread out but never retry at once.
 */
export function backoffDelay(attempt: number, policy: RetryPolicy, random: () => number): number {
  const exponential = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(exponential / 2 + (random() * exponential) / 2);
}

export interface RetryContext {
  readonly sleep: Sleep;
  readonly random: () => number;
  readonly logger: Logger;
  readonly policy: RetryPolicy;
}

/** An error of the cloud, classified; `kind` says whether the caller may wait and try again. */
export class AwsCallError extends CloudError {
  override name = 'AwsCallError';

  constructor(
    message: string,
    operation: string,
    readonly kind: ErrorKind,
    readonly attempts: number,
    cause: unknown,
  ) {
    super(message, operation, { cause });
  }
}

/**
 * Runs one AWS call, retrying throttling and transient errors with backoff up to the policy's attempts.
 * Every retry is logged. Fails with an AwsCallError naming the operation, the AWS error and its kind.
 */
export async function withRetry<T>(operation: string, call: () => Promise<T>, ctx: RetryContext): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      const kind = classifyAwsError(error);
      const { errorName, errorMessage } = describeError(error);
      const retryable = kind === 'throttling' || kind === 'transient';
      if (!retryable || attempt >= ctx.policy.maxAttempts) {
        const why = retryable ? `gave up after ${attempt} attempts` : `not retried (${kind})`;
        throw new AwsCallError(
          `${operation} failed: ${errorName}: ${errorMessage} (${why})`,
          operation,
          kind,
          attempt,
          error,
        );
      }
      const delayMs = backoffDelay(attempt, ctx.policy, ctx.random);
      ctx.logger.warn(
        {
          event: 'aws.retry',
          operation,
          kind,
          attempt,
          maxAttempts: ctx.policy.maxAttempts,
          delayMs,
          errorName,
        },
        'retrying AWS call',
      );
      await ctx.sleep(delayMs);
    }
  }
}
