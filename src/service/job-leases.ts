import type { Logger } from 'pino';
import type { Repository } from '../store/repository.ts';
import type { ServiceJob } from './jobs.ts';
import type { Clock } from './ports.ts';

export interface JobLeasesDeps {
  readonly clock: Clock;
  readonly repo: Pick<Repository, 'touchJob'>;
  readonly logger: Logger;
  readonly leaseSeconds: number;
}

/**
 * Self-launched jobs' leases: when each was last heard of (a poll or a report), in memory at once and in
 * the store at most every tenth of the lease. execution.ts judges a job lost by `lastSeen`.
 */
export class JobLeases {
  /** Each job's last poll or report; the stored lastSeenAt lags it by at most a tenth of the lease. */
  private readonly seenAt = new Map<number, number>();
  /** When this process loaded the state: leases count from here at the earliest. */
  private bootedAt = 0;

  constructor(private readonly deps: JobLeasesDeps) {}

  /** The state was loaded: a restart counts as hearing of every job. */
  booted(now: number): void {
    this.bootedAt = now;
  }

  /** Renews the job's lease. */
  touch(job: ServiceJob): void {
    const now = this.deps.clock.now();
    // Memory after the write: one the store refused (the poll answered 503) leaves the next poll to write it.
    if (job.lastSeenAt === null || now - job.lastSeenAt >= this.deps.leaseSeconds * 100) {
      this.deps.repo.touchJob(job.id, now);
      job.lastSeenAt = now;
    }
    this.seenAt.set(job.id, now);
  }

  /**
   * `touch` after a request's own change is stored (a report, a replayed submission's new token): a
   * renewal the store refuses then is logged, not answered 503, which would have the client send again
   * what was taken. It changed nothing in memory, so the next poll or report writes it.
   */
  touchAfterStored(job: ServiceJob): void {
    try {
      this.touch(job);
    } catch (error) {
      this.deps.logger.warn(
        { event: 'lease_renewal_failed', jobId: job.id, error: (error as Error).message },
        "a job's lease renewal was not stored; the next poll renews it",
      );
    }
  }

  /** When a self-launched job was last heard of (a restart counts as hearing of every job). */
  lastSeen(job: ServiceJob): number {
    return Math.max(
      this.seenAt.get(job.id) ?? Number.NEGATIVE_INFINITY,
      job.lastSeenAt ?? Number.NEGATIVE_INFINITY,
      job.startedAt ?? Number.NEGATIVE_INFINITY,
      this.bootedAt,
    );
  }

  /** Self-launched running jobs not heard of for longer than `leaseMs`, with how long (s) they were silent. */
  expired(
    jobs: Iterable<ServiceJob>,
    now: number,
    leaseMs: number,
  ): Array<{ job: ServiceJob; silentSeconds: number }> {
    const lost: Array<{ job: ServiceJob; silentSeconds: number }> = [];
    for (const job of jobs) {
      if (job.workload || job.state !== 'running') continue;
      const silentMs = now - this.lastSeen(job);
      if (silentMs > leaseMs) lost.push({ job, silentSeconds: Math.round(silentMs / 1000) });
    }
    return lost;
  }

  /** The job ended: nothing more to hear of it. */
  forget(jobId: number): void {
    this.seenAt.delete(jobId);
  }
}
