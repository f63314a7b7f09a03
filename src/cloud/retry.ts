import type { Logger } from 'pino';
import { CloudError, describeError } from './errors.ts';
import type { Sleep } from './time.ts';

/**
 * boa's one retry layer for calls to the outside world (AWS, Kubernetes): bounded attempts with
 * jittered exponential backoff. Each adapter says how to read its errors (RetryRules); the loop is the
 * same for all. The AWS SDK's clients make one attempt per call (aws/clients.ts), the Kubernetes client
 * none of its own, so a call is sent at most `maxAttempts` times in all.
 */

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  readonly maxAttempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

/** Throttling and transient errors of AWS calls: the only retries they get, so patient. */
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

/** A call that failed for good, with its classification: `kind` tells the caller what happened. */
export class CloudCallError<Kind extends string = string> extends CloudError {
  constructor(
    message: string,
    operation: string,
    readonly kind: Kind,
    readonly attempts: number,
    cause: unknown,
  ) {
    super(message, operation, { cause });
  }
}

/** How one system's errors are read by the retry loop. */
export interface RetryRules<Kind extends string> {
  /** Prefix of the log event (`aws.retry`, `kube.retry`) and the system named in the log line. */
  readonly system: { readonly event: string; readonly name: string };
  readonly classify: (error: unknown) => Kind;
  /** Kinds worth another attempt; anything else fails at once. */
  readonly retried: ReadonlySet<Kind>;
  /** A delay the server asked for (Retry-After), honoured up to the policy's cap. */
  readonly retryAfterMs?: (error: unknown) => number | undefined;
  /** The error thrown when the call fails for good. */
  readonly fail: (
    message: string,
    operation: string,
    kind: Kind,
    attempts: number,
    cause: unknown,
  ) => CloudCallError<Kind>;
}

/**
 * Runs `call`, retrying the kinds the rules retry, up to the policy's attempts, with jittered backoff
 * (or the server's Retry-After when longer, capped). Every retry is logged. Fails with the rules' error
 * naming the operation, the error and its kind. `call` is run afresh each time, so a call that applies
 * a change re-reads what it changes inside it (a conflict is then retried on fresh state).
 */
export async function retrying<T, Kind extends string>(
  operation: string,
  call: () => Promise<T>,
  ctx: RetryContext,
  rules: RetryRules<Kind>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      const kind = rules.classify(error);
      const retryable = rules.retried.has(kind);
      const { errorName, errorMessage } = describeError(error);
      if (!retryable || attempt >= ctx.policy.maxAttempts) {
        const why = retryable ? `gave up after ${attempt} attempts` : `not retried (${kind})`;
        throw rules.fail(
          `${operation} failed: ${errorName}: ${errorMessage} (${why})`,
          operation,
          kind,
          attempt,
          error,
        );
      }
      const backoff = backoffDelay(attempt, ctx.policy, ctx.random);
      const delayMs = Math.min(ctx.policy.maxDelayMs, Math.max(backoff, rules.retryAfterMs?.(error) ?? 0));
      ctx.logger.warn(
        {
          event: rules.system.event,
          operation,
          kind,
          attempt,
          maxAttempts: ctx.policy.maxAttempts,
          delayMs,
          errorName,
        },
        `retrying ${rules.system.name} call`,
      );
      await ctx.sleep(delayMs);
    }
  }
}
