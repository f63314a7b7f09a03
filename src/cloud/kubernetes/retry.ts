import { ApiException } from '@kubernetes/client-node';
import { CloudError, describeError } from '../errors.ts';
import { backoffDelay, type RetryContext } from '../retry.ts';

/**
 * How a Kubernetes API error is handled: throttling (429) and transient errors (5xx, timeouts, network)
 * are retried with backoff, as is a Conflict (409 on a stale resourceVersion: the call re-reads first);
 * AlreadyExists and NotFound are answers the caller uses (adopt the pod, it is gone already); the rest
 * (403, 422 Invalid, ...) is final.
 */
export type KubeErrorKind = 'throttling' | 'transient' | 'conflict' | 'exists' | 'not-found' | 'fatal';

const TRANSIENT_CODES = new Set([500, 502, 503, 504]);
const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
]);

/** The Status reason of an API error body (sent as JSON text). */
export function statusReason(error: ApiException<unknown>): string | undefined {
  const body = error.body;
  try {
    const status = (typeof body === 'string' ? JSON.parse(body) : body) as { reason?: string } | undefined;
    return status?.reason;
  } catch {
    return undefined;
  }
}

export function classifyKubeError(error: unknown): KubeErrorKind {
  if (error instanceof ApiException) {
    if (error.code === 429) return 'throttling';
    if (TRANSIENT_CODES.has(error.code)) return 'transient';
    if (error.code === 404) return 'not-found';
    if (error.code === 409) return statusReason(error) === 'AlreadyExists' ? 'exists' : 'conflict';
    return 'fatal';
  }
  if (!(error instanceof Error)) return 'fatal';
  // node-fetch: an aborted request (our request timeout) or a system error (connection refused, reset).
  if (error.name === 'AbortError' || error.name === 'TimeoutError') return 'transient';
  const { code, type } = error as { code?: string; type?: string };
  if (type === 'system' || type === 'request-timeout' || (code && NETWORK_CODES.has(code)))
    return 'transient';
  return 'fatal';
}

/** A Kubernetes call that failed for good, with its classification. */
export class KubeCallError extends CloudError {
  override name = 'KubeCallError';

  constructor(
    message: string,
    operation: string,
    readonly kind: KubeErrorKind,
    readonly attempts: number,
    cause: unknown,
  ) {
    super(message, operation, { cause });
  }
}

const RETRIED = new Set<KubeErrorKind>(['throttling', 'transient', 'conflict']);

function retryAfterMs(error: unknown): number | undefined {
  if (!(error instanceof ApiException)) return undefined;
  const headers = error.headers as Record<string, string> | undefined;
  const seconds = Number(headers?.['retry-after']);
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : undefined;
}

/**
 * The one retry layer of the Kubernetes executor: throttling, transient errors and conflicts are retried
 * with the cloud's backoff (src/cloud/retry.ts; a 429's Retry-After is honoured up to the cap), up to the
 * policy's attempts; anything else, or the last failure, is a KubeCallError naming the operation.
 */
export async function withKubeRetry<T>(
  operation: string,
  call: () => Promise<T>,
  ctx: RetryContext,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      const kind = classifyKubeError(error);
      if (!RETRIED.has(kind) || attempt >= ctx.policy.maxAttempts) {
        const { errorName, errorMessage } = describeError(error);
        const why = RETRIED.has(kind) ? `gave up after ${attempt} attempts` : `not retried (${kind})`;
        throw new KubeCallError(
          `${operation} failed: ${errorName}: ${errorMessage} (${why})`,
          operation,
          kind,
          attempt,
          error,
        );
      }
      const backoff = backoffDelay(attempt, ctx.policy, ctx.random);
      const delayMs = Math.min(ctx.policy.maxDelayMs, Math.max(backoff, retryAfterMs(error) ?? 0));
      ctx.logger.warn(
        { event: 'kube.retry', operation, kind, attempt, maxAttempts: ctx.policy.maxAttempts, delayMs },
        'retrying Kubernetes call',
      );
      await ctx.sleep(delayMs);
    }
  }
}

/** The kind of a failure, seen through the retry layer's wrapper. */
export function kindOf(error: unknown): KubeErrorKind {
  return error instanceof KubeCallError ? error.kind : classifyKubeError(error);
}
