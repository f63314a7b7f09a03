import type { Db } from './db.ts';

/**
 * Senders kept per job: the most recently heard. Each reporting replica of each generation is one (rank
 * 0 alone, as docs/client.md has it), and a late attempt comes from one heard within a proxy's timeout,
 * not from one sixteen senders ago.
 */
export const SENDERS_KEPT = 16;

/** The newest report sequence number taken from each sender of a job's reports (schema.ts). */
export class ReportSequences {
  private readonly select;
  private readonly upsert;
  private readonly trim;
  private readonly prune;

  constructor(db: Db) {
    const client = db.$client;
    this.select = client
      .prepare('SELECT number FROM report_sequences WHERE job_id = ? AND sender = ?')
      .pluck();
    this.upsert = client.prepare(
      `INSERT INTO report_sequences (job_id, sender, number, taken_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (job_id, sender) DO UPDATE SET number = excluded.number, taken_at = excluded.taken_at`,
    );
    this.trim = client.prepare(
      `DELETE FROM report_sequences WHERE job_id = ? AND sender NOT IN
       (SELECT sender FROM report_sequences WHERE job_id = ? ORDER BY taken_at DESC, rowid DESC LIMIT ?)`,
    );
    this.prune = client.prepare(
      `DELETE FROM report_sequences WHERE taken_at < ?
       AND job_id NOT IN (SELECT id FROM jobs WHERE state IN ('waiting', 'running'))`,
    );
  }

  /** The newest number taken from `sender` for the job; undefined: none (or it is no longer kept). */
  taken(jobId: number, sender: string): number | undefined {
    return this.select.get(jobId, sender) as number | undefined;
  }

  /** Records a report taken (inside the caller's transaction, with the report's own write). */
  record(jobId: number, sender: string, number: number, now: number): void {
    const known = this.taken(jobId, sender) !== undefined;
    this.upsert.run(jobId, sender, number, now);
    if (!known) this.trim.run(jobId, jobId, SENDERS_KEPT);
  }

  /**
   * Deletes the senders of jobs that ended, last heard before `time` (inside the caller's transaction):
   * an ended job takes no report. Returns rows deleted.
   */
  pruneBefore(time: number): number {
    return this.prune.run(time).changes;
  }
}
