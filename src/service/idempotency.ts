import { createHash } from 'node:crypto';
import { isIdempotencyKeyTaken, type JobRow } from '../store/repository.ts';
import { ServiceError } from './errors.ts';
import { type Registered, registerJob } from './job-operations.ts';
import type { Workload } from './ports.ts';
import type { BoaService } from './service.ts';
import { hashToken, newToken } from './tokens.ts';

/** What a submission asks for: the body of POST /v1/jobs as parsed. */
export interface Submission {
  class: string;
  name?: string;
  workload?: Workload;
}

/**
 * A submission with an Idempotency-Key (draft-ietf-httpapi-idempotency-key-header): the first one
 * registers the job with the key and its request's fingerprint, in the job's own insert; any later one
 * with the key gets that job back (`replayed`) instead of a second job to run and pay for.
 */
export function registerJobOnce(svc: BoaService, submission: Submission, key: string): Registered {
  const fingerprint = requestFingerprint(submission);
  const earlier = svc.deps.repo.jobByIdempotencyKey(key);
  if (earlier) return replay(svc, earlier, key, fingerprint);
  try {
    return registerJob(svc, submission.class, submission.name, submission.workload, { key, fingerprint });
  } catch (error) {
    if (!isIdempotencyKeyTaken(error)) throw error;
    // Another submission with this key committed between the lookup and the insert: it won.
    return replay(svc, svc.deps.repo.jobByIdempotencyKey(key)!, key, fingerprint);
  }
}

/** SHA-256 of the submission's JSON with keys sorted: field order does not make another request. */
export function requestFingerprint(submission: Submission): string {
  return createHash('sha256').update(canonicalJson(submission)).digest('hex');
}

function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/**
 * The earlier job, answered as its first response was as far as boa can. An executed job's token is
 * derived from its stored seed, so it is the same token again. A self-launched job's token was never
 * stored (only its hash): it gets a new one and the old one stops working, since whoever retries is
 * taken to be the client that lost the first response. Finished jobs are answered too: their state
 * says what happened, and nothing runs again.
 */
function replay(svc: BoaService, row: JobRow, key: string, fingerprint: string): Registered {
  if (row.requestFingerprint !== fingerprint) {
    throw new ServiceError(
      422,
      'idempotency_key_reused',
      `Idempotency-Key ${key} was used for a different request (job ${row.id}); ` +
        'send that request again, or use a new key for a new job',
      'idempotency-key',
      { jobId: row.id },
    );
  }
  const job = svc.job(row.id);
  let token: string;
  if (row.tokenSeed !== null) {
    token = svc.jobToken(row.tokenSeed);
  } else {
    token = newToken();
    const tokenHash = hashToken(token);
    // Stored first: a refused write (disk full) leaves the first token working, as the store holds it.
    svc.deps.repo.updateJob(job.id, { tokenHash });
    job.tokenHash = tokenHash;
    // Its launcher is only now able to poll: the retry renews the lease it would otherwise lose.
    if (job.state === 'waiting' || job.state === 'running') svc.leases.touchAfterStored(job);
  }
  const tokenReplaced = row.tokenSeed === null;
  svc.deps.logger.info(
    { event: 'job_submission_replayed', jobId: job.id, state: job.state, tokenReplaced },
    'submission replayed (Idempotency-Key seen before): no new job',
  );
  return { job, token, replayed: { tokenReplaced } };
}
