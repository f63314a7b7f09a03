import type { Logger } from 'pino';
import type { RetryContext } from '../retry.ts';
import { kindOf, withKubeRetry } from './retry.ts';

/** One of a job's objects that boa writes and never reads back (its token Secret, its NetworkPolicy). */
export interface CreateOnce {
  /** What the object is, in the logs and a refusal's reason: 'token secret', 'network policy'. */
  readonly what: string;
  /** Log events' middle part: kube.<event>.created, kube.<event>.rejected. */
  readonly event: string;
  readonly jobId: number;
  readonly name: string;
  readonly create: () => Promise<unknown>;
}

/**
 * Creates the object through the retry layer. AlreadyExists is an earlier pass's or life's: its name
 * carries its owner's uid and its content depends only on the job and that owner, so nothing is read or
 * replaced, and boa needs only create on it. Returns why the API server refused it
 * (400, 422, a quota's 403), for the replicas to fail with; anything else that fails throws, and the step
 * is tried again next reconcile.
 */
export async function createOnce(
  object: CreateOnce,
  retry: RetryContext,
  logger: Logger,
): Promise<string | undefined> {
  const { what, event, jobId, name } = object;
  try {
    await withKubeRetry(`create ${what}`, object.create, retry);
    logger.info({ event: `kube.${event}.created`, jobId, name }, `job ${what} created`);
    return undefined;
  } catch (error) {
    const kind = kindOf(error);
    if (kind === 'exists') return undefined;
    // A quota on Secrets or policies counts objects, which no grace period frees: refused as the object.
    if (kind !== 'refused' && kind !== 'quota') throw error;
    const reason = `${what} rejected by the API server: ${(error as Error).message}`;
    logger.error({ event: `kube.${event}.rejected`, jobId, name, reason }, `job ${what} rejected`);
    return reason;
  }
}
