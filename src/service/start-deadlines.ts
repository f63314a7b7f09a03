import type { ServiceJob } from './jobs.ts';
import type { DesiredJob, ReplicaStatus } from './ports.ts';

/**
 * The start deadline of executed jobs (startTimeoutSeconds): a generation whose replicas are not all
 * running that long after the executor took it has failed, so a pod that never starts (a volume that
 * cannot attach, a pull that never succeeds, a create refused every time) does not hold its GPUs for
 * ever. The clock starts at the first reconcile the executor answered, again after it fails (an outage
 * is no generation's fault), and while the generation before is still stopping (it cannot start yet).
 */
export class StartDeadlines {
  /** When each job's current generation was taken, until all of it runs. */
  private readonly asked = new Map<number, { generation: number; at: number; olderSince?: number }>();

  /** The executor answered a reconcile for these jobs: each generation new to it starts its clock. */
  taken(sent: readonly DesiredJob[], now: number): void {
    for (const job of sent)
      if (this.asked.get(job.jobId)?.generation !== job.generation)
        this.asked.set(job.jobId, { generation: job.generation, at: now });
  }

  /** These jobs' replicas could not be made for no fault of theirs (an outage): their clocks start again. */
  restart(jobIds: Iterable<number>, now: number): void {
    for (const jobId of jobIds) {
      const asked = this.asked.get(jobId);
      if (asked) asked.at = now;
    }
  }

  /** The executor failed: every clock starts again when it answers. */
  executorFailed(): void {
    this.asked.clear();
  }

  /**
   * The generations past their deadline, each with the replica to blame (the first rank not running)
   * and why, forgotten once returned. `done`: jobs that finished in this pass, whatever their ranks.
   */
  overdue(
    byJob: ReadonlyMap<number, readonly ReplicaStatus[]>,
    jobs: (id: number) => ServiceJob | undefined,
    specs: (id: number) => DesiredJob | undefined,
    done: ReadonlySet<number>,
    now: number,
    limitMs: number,
  ): Array<{ job: ServiceJob; replica: ReplicaStatus }> {
    const late: Array<{ job: ServiceJob; replica: ReplicaStatus }> = [];
    for (const [jobId, asked] of this.asked) {
      const job = jobs(jobId);
      if (job?.state !== 'running' || job.generation !== asked.generation || done.has(jobId)) {
        this.asked.delete(jobId);
        continue;
      }
      const replicas = byJob.get(jobId) ?? [];
      // One stopping on a node whose kubelet is silent keeps it waiting until that node is removed, but
      // for no longer than a start may take: one that never stops (a pod stuck Terminating on a Ready
      // node, which boa never forces) held the generation's GPUs for ever, and it said nothing (found in
      // review). Then the clock runs, and the deadline names what the replicas wait for.
      const older = replicas.find(
        (r) => r.generation < job.generation && r.phase !== 'succeeded' && r.phase !== 'failed',
      );
      if (!older) delete asked.olderSince;
      else if (now - (asked.olderSince ??= now) < limitMs || !(limitMs > 0)) asked.at = now;
      const current = replicas.filter((r) => r.generation === job.generation);
      const up = (rank: number) =>
        current.some((r) => r.rank === rank && (r.phase === 'running' || r.phase === 'succeeded'));
      const waiting = (specs(jobId)?.replicas ?? []).filter((r) => !up(r.rank));
      if (waiting.length === 0) {
        this.asked.delete(jobId);
        continue;
      }
      if (!(limitMs > 0) || now - asked.at < limitMs) continue;
      const first = waiting[0]!;
      const seen = current.find((r) => r.rank === first.rank);
      const why =
        seen?.reason ??
        (seen
          ? seen.phase
          : older
            ? `generation ${older.generation}'s rank ${older.rank} on ${older.node} has not stopped (${older.phase}), and the next starts only once it has`
            : 'no replica was made (the executor log says why)');
      this.asked.delete(jobId);
      late.push({
        job,
        replica: {
          jobId,
          generation: job.generation,
          rank: first.rank,
          node: first.node,
          phase: 'failed',
          reason: `did not start within ${limitMs / 1000} s (startTimeoutSeconds): ${why}`,
        },
      });
    }
    return late;
  }
}
