import type { Logger } from 'pino';
import type { DesiredJob, ReplicaSpec, ReplicaStatus } from '../../service/ports.ts';
import { podName } from './names.ts';
import type { KubeErrorKind } from './retry.ts';

/**
 * A pod create that failed for a reason its job is not to blame for: the API server unavailable or
 * throttling past the retries, or boa's token refused for a moment. An admission webhook down for 15
 * minutes failed every starting generation as the job's fault (found in review). Per job: one flaky
 * write elsewhere (a policy, another job's pod) must not stop every job's deadline (found in review of
 * that fix); an RBAC 403 is a setup to fix, not waited out.
 */
const OUTAGE_KINDS: ReadonlySet<KubeErrorKind> = new Set(['transient', 'throttling', 'unauthorized']);

/**
 * What became of replicas whose pod create the API server refused, one status a replica until its
 * generation goes: refused for good (422, an admission check, its Secret or policy refused) it is
 * reported failed and not created again; refused by a ResourceQuota it is reported starting with the
 * quota's words and created again each pass, since the quota passes once other pods (another job's,
 * still in their grace) are gone, and one that never passes meets the start deadline, which then names
 * the quota (found in review: it failed the replica at once, a restart used up by another job's
 * terminating pods). And the jobs whose creates failed for no fault of theirs this pass (outage).
 */
export class CreateRefusals {
  private readonly refused = new Map<string, { status: ReplicaStatus; retried: boolean }>();
  private failedForNoFault = new Set<number>();

  constructor(private readonly logger: Logger) {}

  /** A pass begins: which jobs' creates fail for no fault of theirs is counted afresh. */
  beginPass(): void {
    this.failedForNoFault = new Set();
  }

  /** Jobs whose pod creates failed this pass for no fault of theirs (Executor.outage). */
  get outage(): ReadonlySet<number> {
    return this.failedForNoFault;
  }

  /**
   * A write the job's pods wait on (its Service, NetworkPolicy or token Secret) failed for no fault of
   * the job's: an outage for it, as a pod create's would be, which it never reached.
   */
  stepFailed(jobId: number, kind: KubeErrorKind): void {
    if (OUTAGE_KINDS.has(kind)) this.failedForNoFault.add(jobId);
  }

  /** Refused for good: no pod is created for it again in its generation. */
  blocks(name: string): boolean {
    const entry = this.refused.get(name);
    return entry !== undefined && !entry.retried;
  }

  /** Its pod exists now. */
  created(name: string): void {
    this.refused.delete(name);
  }

  /** Reports the replica failed until its generation goes, instead of creating its pod again. */
  reject(replica: ReplicaSpec, reason: string): void {
    const { jobId, generation, rank, node } = replica;
    const status: ReplicaStatus = { jobId, generation, rank, node, phase: 'failed', reason };
    this.refused.set(podName(jobId, generation, rank), { status, retried: false });
  }

  /**
   * A create that failed: true when this settles it (a quota waited for, a pod refused), false when the
   * step fails and the next pass tries again.
   */
  failed(replica: ReplicaSpec, kind: KubeErrorKind, error: Error, log: Record<string, unknown>): boolean {
    const name = podName(replica.jobId, replica.generation, replica.rank);
    if (OUTAGE_KINDS.has(kind)) this.failedForNoFault.add(replica.jobId);
    if (kind === 'quota') {
      const quota = quotaMessage(error);
      if (!this.refused.has(name))
        this.logger.warn({ event: 'kube.pod.quota', ...log, error: quota }, 'pod waits for quota');
      const { jobId, generation, rank, node } = replica;
      const reason = `waiting for quota: ${quota}`;
      this.refused.set(name, {
        status: { jobId, generation, rank, node, phase: 'starting', reason },
        retried: true,
      });
      return true;
    }
    // Failed for another reason now: no longer said to wait for quota.
    this.refused.delete(name);
    if (kind !== 'refused') return false;
    const reason = `pod rejected by the API server: ${error.message}`;
    this.reject(replica, reason);
    this.logger.error({ event: 'kube.pod.rejected', ...log, reason }, 'replica pod rejected');
    return true;
  }

  /** Forgets replicas of generations no longer wanted, and waits whose pod exists. */
  prune(want: ReadonlyMap<number, DesiredJob>, podExists: (name: string) => boolean): void {
    for (const [name, { status, retried }] of this.refused)
      if (want.get(status.jobId)?.generation !== status.generation || (retried && podExists(name)))
        this.refused.delete(name);
  }

  statuses(): ReplicaStatus[] {
    return [...this.refused.values()].map((entry) => entry.status);
  }
}

/** The quota's own words from a 403's Status (`exceeded quota: gpus, requested: ...`), else the error's. */
function quotaMessage(error: Error): string {
  // Up to the quote (or escaped quote) that ends it in the Status the error message carries as JSON.
  return /exceeded quota[^"\\]*/.exec(error.message)?.[0]?.trim() ?? error.message;
}
