import { ApiException } from '@kubernetes/client-node';
import { CloudCallError, type RetryContext, type RetryPolicy, retrying, type RetryRules } from '../retry.ts';

/**
 * How a Kubernetes API error is handled: throttling (429) and transient errors (5xx, timeouts, network)
 * are retried with backoff, as is a Conflict (409 on a stale resourceVersion: the call re-reads first)
 * and an Unauthorized (401: boa's token, which an authenticator such as EKS's can fail to accept for a
 * moment); AlreadyExists and NotFound are answers the caller uses (adopt the pod, it is gone already).
 * The rest is final: `forbidden` (403 from RBAC: boa's own permissions), `quota` (403, a ResourceQuota
 * exceeded: it passes once other pods are gone, so the next pass tries again), `namespace` (a create in
 * a jobs namespace that does not exist or is being deleted: boa's setup, not the object), `refused` (the
 * object itself: 400, 422 Invalid, or a 403 from an admission check) and `fatal` (anything else).
 */
export type KubeErrorKind =
  | 'throttling'
  | 'transient'
  | 'conflict'
  | 'unauthorized'
  | 'exists'
  | 'not-found'
  | 'forbidden'
  | 'quota'
  | 'namespace'
  | 'refused'
  | 'fatal';

const TRANSIENT_CODES = new Set([500, 502, 503, 504]);
const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
]);

interface Status {
  reason?: string;
  message?: string;
}

/** The Status of an API error body (sent as JSON text). */
function apiStatus(error: ApiException<unknown>): Status | undefined {
  const body = error.body;
  try {
    return (typeof body === 'string' ? JSON.parse(body) : body) as Status | undefined;
  } catch {
    return undefined;
  }
}

/** A ResourceQuota's refusal: `pods "x" is forbidden: exceeded quota: gpus, requested: ...`. */
const QUOTA_EXCEEDED = /\bexceeded quota\b/;

/**
 * The API server's NamespaceLifecycle admission on a create: `namespaces "x" not found` (404) in a
 * namespace that does not exist, `... unable to create new content in namespace x because it is being
 * terminated` (403, cause NamespaceTerminating) in one being deleted. Read as an admission check's 403,
 * the latter failed every starting replica as refused by the API server, each a restart of its job
 * (found in review: `kubectl delete namespace` while boa ran).
 */
const NAMESPACE_MISSING = /^namespaces "[^"]*" not found$/;
const NAMESPACE_TERMINATING =
  /\bunable to create new content in namespace \S+ because it is being terminated\b/;

/**
 * The authorizer's refusal, as the API server words it: `User "..." cannot create resource "pods" ...`
 * (or `cannot get path "..."`). A quota's or an admission check's 403 names the object instead.
 */
const RBAC_DENIAL = /\bcannot [a-z]+ (resource|path) "/;

export function classifyKubeError(error: unknown): KubeErrorKind {
  if (error instanceof ApiException) {
    if (error.code === 429) return 'throttling';
    if (TRANSIENT_CODES.has(error.code)) return 'transient';
    if (error.code === 404)
      return NAMESPACE_MISSING.test(apiStatus(error)?.message ?? '') ? 'namespace' : 'not-found';
    if (error.code === 409) return apiStatus(error)?.reason === 'AlreadyExists' ? 'exists' : 'conflict';
    if (error.code === 401) return 'unauthorized';
    if (error.code === 403) {
      const message = apiStatus(error)?.message ?? '';
      if (RBAC_DENIAL.test(message)) return 'forbidden';
      if (NAMESPACE_TERMINATING.test(message)) return 'namespace';
      return QUOTA_EXCEEDED.test(message) ? 'quota' : 'refused';
    }
    if (error.code === 400 || error.code === 422) return 'refused';
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
export class KubeCallError extends CloudCallError<KubeErrorKind> {
  override name = 'KubeCallError';
}

function retryAfterMs(error: unknown): number | undefined {
  if (!(error instanceof ApiException)) return undefined;
  const headers = error.headers as Record<string, string> | undefined;
  const seconds = Number(headers?.['retry-after']);
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : undefined;
}

const KUBE_RULES: RetryRules<KubeErrorKind> = {
  system: { event: 'kube.retry', name: 'Kubernetes' },
  classify: classifyKubeError,
  retried: new Set<KubeErrorKind>(['throttling', 'transient', 'conflict', 'unauthorized']),
  retryAfterMs,
  fail: (...args) => new KubeCallError(...args),
};

/** Kubernetes calls: fewer and quicker than AWS's, since a tick waits for them. */
export const KUBE_RETRY: RetryPolicy = { maxAttempts: 4, baseDelayMs: 200, maxDelayMs: 5_000 };

/**
 * Runs one Kubernetes call in boa's retry layer (src/cloud/retry.ts): throttling, transient errors,
 * conflicts and 401s are retried with backoff (a 429's Retry-After honoured up to the cap), up to the policy's
 * attempts; anything else, or the last failure, is a KubeCallError naming the operation. A call that
 * updates an object reads it inside `call`, so a conflict (409 on a stale resourceVersion) is retried
 * by re-reading and re-applying.
 */
export function withKubeRetry<T>(operation: string, call: () => Promise<T>, ctx: RetryContext): Promise<T> {
  return retrying(operation, call, ctx, KUBE_RULES);
}

/** The kind of a failure, seen through the retry layer's wrapper. */
export function kindOf(error: unknown): KubeErrorKind {
  return error instanceof KubeCallError ? error.kind : classifyKubeError(error);
}
