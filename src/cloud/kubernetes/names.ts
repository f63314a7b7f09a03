/** Labels identify what boa owns; names are deterministic so a second create is refused, never doubled. */
export const LABELS = {
  jobId: 'boa.dev/job-id',
  generation: 'boa.dev/generation',
  rank: 'boa.dev/rank',
  managedBy: 'app.kubernetes.io/managed-by',
  component: 'app.kubernetes.io/component',
  /**
   * On pods reached only through their job's NetworkPolicy ('job'): the jobs namespace's policy still
   * admits the namespace to pods without it, made by a boa from before per-job policies.
   */
  network: 'boa.dev/network',
} as const;

export const MANAGED_BY = 'boa';

/** The Lease in the jobs namespace naming the one boa that owns it (namespace-claim.ts). */
export const CLAIM_LEASE_NAME = 'boa-owner';

/** Everything the executor owns, and nothing else, matches this. */
export const OWNED_SELECTOR = `${LABELS.managedBy}=${MANAGED_BY}`;

/** The job's headless Service: rendezvous DNS, and the owner of all its pods. */
export function serviceName(jobId: number): string {
  return `boa-job-${jobId}`;
}

/**
 * The Secret holding the job's token (BOA_JOB_TOKEN), named for its owner, the job's Service (its uid):
 * a Service made again (deleted by hand, or the job wanted again before the garbage collector ran) gets
 * a Secret of its own, never the old one's, which the collector deletes under its pods. A DNS-1123
 * subdomain of at most 66 characters (job ids have at most 15 digits, jobIdOf; a uid 36).
 */
export function tokenSecretName(jobId: number, serviceUid: string): string {
  return `${serviceName(jobId)}-token-${serviceUid}`;
}

/** The job's NetworkPolicy, named for its owner as the Secret is: at most 59 characters. */
export function networkPolicyName(jobId: number, serviceUid: string): string {
  return `${serviceName(jobId)}-${serviceUid}`;
}

/** What every object of a job carries: boa's, a job's, which job. */
export function jobLabels(jobId: number): Record<string, string> {
  return { [LABELS.managedBy]: MANAGED_BY, [LABELS.component]: 'job', [LABELS.jobId]: String(jobId) };
}

/** Owned by the job's Service: deleting it (boa does once the job is gone) collects the object. */
export function ownedByService(jobId: number, uid: string) {
  return [{ apiVersion: 'v1', kind: 'Service', name: serviceName(jobId), uid, controller: true }];
}

export function podName(jobId: number, generation: number, rank: number): string {
  return `boa-job-${jobId}-g${generation}-r${rank}`;
}

/** The pod's hostname within the job's Service: stable across generations, so MASTER_ADDR is too. */
export function podHostname(rank: number): string {
  return `rank-${rank}`;
}

/** Rank 0's DNS name through the headless Service (resolved with the pod's search domains). */
export function rank0Address(jobId: number, namespace: string): string {
  return `${podHostname(0)}.${serviceName(jobId)}.${namespace}.svc`;
}

export interface PodIdentity {
  readonly jobId: number;
  readonly generation: number;
  readonly rank: number;
}

/**
 * A job Service's job id from its labels; undefined for any other object labelled as boa's (the
 * executor deletes a job's Service once the job is gone, and must not take another for one).
 */
export function jobIdOf(labels: Readonly<Record<string, string>> | undefined): number | undefined {
  if (labels?.[LABELS.component] !== 'job') return undefined;
  const raw = labels[LABELS.jobId] ?? '';
  if (!/^[0-9]{1,15}$/.test(raw)) return undefined;
  return Number(raw);
}

/** Reads a pod's identity from its labels; undefined for a pod whose labels are not boa's. */
export function identityOf(labels: Readonly<Record<string, string>> | undefined): PodIdentity | undefined {
  if (!labels) return undefined;
  // Plain digits, at most 15 (job ids never have more): `1e15`, `0x10` or 2^53 in a label made by hand
  // would otherwise pass for an id, and boa numbers new jobs above every id it sees.
  const raw = [labels[LABELS.jobId], labels[LABELS.generation], labels[LABELS.rank]];
  if (!raw.every((v) => v !== undefined && /^[0-9]{1,15}$/.test(v))) return undefined;
  const [jobId, generation, rank] = raw.map(Number) as [number, number, number];
  return { jobId, generation, rank };
}
