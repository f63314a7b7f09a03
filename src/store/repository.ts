import { and, desc, eq, inArray, isNotNull, lt } from 'drizzle-orm';
import type { ClassProfile } from '../core/profile.ts';
import type { Db } from './db.ts';
import { PastArrivals } from './history.ts';
import { type JobIdMark, keepJobIdsAbove } from './job-ids.ts';
import { prepareHot } from './hot-statements.ts';
import { LedgerStore } from './ledger-store.ts';
import { ReportSequences } from './report-sequences.ts';
import { SubmissionMirror, submissionSource } from './submission-mirror.ts';
import { allocationSamples, jobClasses, jobs, ledgerNodes, plans, resizes, settings } from './schema.ts';

export type JobState = 'waiting' | 'running' | 'done' | 'cancelled' | 'failed' | 'lost';
export type JobRow = typeof jobs.$inferSelect;
/** What `listJobs` keeps: any of these states, this class, this exact name (each optional). */
export interface JobFilter {
  states?: JobState[];
  className?: string;
  name?: string;
  /** Only jobs with a lower id: the page before one already listed. */
  beforeId?: number;
  /** 'ended': the jobs that ended last, newest first (jobs not ended after them), not the newest submitted. */
  order?: 'submitted' | 'ended';
}
export type NewJob = typeof jobs.$inferInsert;
export type PlanRow = typeof plans.$inferSelect;
export type ResizeRow = typeof resizes.$inferSelect;
/** The setting that keeps where the ledger was last pruned to (its rows before it are gone). */
export const LEDGER_PRUNED_BEFORE = 'ledgerPrunedBefore';

/** The columns a tick or a job's report changes: what `saveJobState` writes. */
export type JobStateColumns = Pick<
  JobRow,
  | 'id'
  | 'state'
  | 'startedAt'
  | 'finishedAt'
  | 'planId'
  | 'widths'
  | 'statEpoch'
  | 'epochStartedAt'
  | 'epochGeneration'
  | 'epochTimedFromReport'
  | 'workDoneSeconds'
  | 'width'
  | 'allocation'
  | 'generation'
  | 'restarts'
  | 'exitCode'
  | 'failureReason'
  | 'restartNotBefore'
  | 'lastReportAt'
  | 'generationSince'
  | 'idleFillGpus'
  | 'gpuMs'
  | 'gpuMsSince'
>;

/**
 * Every read and write of the service's state. Methods that change more than one row run in one
 * transaction, so a crash leaves either all of a change or none of it.
 */
export class Repository {
  /** The tick's statements, prepared once: building queries costs more than running them here. */
  private readonly hot: ReturnType<typeof prepareHot>;
  /** The ledger: GPUs paid (nodes) and allocated (jobs) over time (ledger-store.ts). */
  readonly ledger: LedgerStore;
  /** Submissions imported from before the service's own record (history.ts). */
  readonly history: PastArrivals;
  /** The newest report sequence number taken from each sender of a job's progress (report-sequences.ts). */
  readonly reportSequences: ReportSequences;
  /** The jobs' submissions, as the rate estimator reads them every tick (submission-mirror.ts). */
  private readonly submissions: SubmissionMirror;

  /** `jobIdMark`: where the highest job id handed out is kept outside the database (none in memory). */
  constructor(
    readonly db: Db,
    private readonly jobIdMark?: JobIdMark,
  ) {
    this.history = new PastArrivals(db);
    this.reportSequences = new ReportSequences(db);
    this.hot = prepareHot(db);
    this.ledger = new LedgerStore(this.hot);
    this.submissions = new SubmissionMirror(submissionSource(db));
  }

  /**
   * Runs `fn` in one transaction, begun IMMEDIATE: its write lock taken at BEGIN, waiting out (busy_timeout)
   * another process's write as a single write does. Begun deferred, one that read before it wrote (a
   * history import) failed at once, SQLITE_BUSY, while another process (a sqlite3 shell) held the lock
   * for a moment: SQLite cannot wait for a lock on behalf of a read it has already made (found in review).
   */
  transaction<T>(fn: () => T): T {
    try {
      return this.db.$client.transaction(fn).immediate();
    } catch (error) {
      // Rolled back: what the in-memory mirrors took from it is re-read from the store, at their next
      // use: read here, a read the failing disk refused too replaced the write's own error.
      this.submissions.reset();
      this.ledger.reloadAtNextUse();
      throw error;
    }
  }

  getSetting<T>(key: string): T | undefined {
    const row = this.db.select().from(settings).where(eq(settings.key, key)).get();
    return row?.value as T | undefined;
  }

  deleteSetting(key: string): void {
    this.db.delete(settings).where(eq(settings.key, key)).run();
  }

  putSetting(key: string, value: unknown, now: number): void {
    this.db
      .insert(settings)
      .values({ key, value, updatedAt: now })
      .onConflictDoUpdate({ target: settings.key, set: { value, updatedAt: now } })
      .run();
  }

  listClasses(): Array<{ name: string; profile: ClassProfile; priorRatePerHour: number; updatedAt: number }> {
    return this.db
      .select()
      .from(jobClasses)
      .all()
      .map((r) => ({ ...r, profile: r.profile as ClassProfile }));
  }

  putClass(profile: ClassProfile, priorRatePerHour: number, now: number): void {
    this.db
      .insert(jobClasses)
      .values({ name: profile.name, profile, priorRatePerHour, updatedAt: now })
      .onConflictDoUpdate({ target: jobClasses.name, set: { profile, priorRatePerHour, updatedAt: now } })
      .run();
  }

  /** Removes a class; true when it existed. Jobs keep their class name (history stays readable). */
  deleteClass(name: string): boolean {
    return this.db.delete(jobClasses).where(eq(jobClasses.name, name)).run().changes > 0;
  }

  /** The next job id goes above `highest` (job-ids.ts); true when it was not already. */
  keepJobIdsAbove(highest: number): boolean {
    return keepJobIdsAbove(this.db.$client, highest);
  }

  insertJob(job: NewJob): JobRow {
    const row = this.db.insert(jobs).values(job).returning().get();
    this.jobIdMark?.record(row.id);
    return row;
  }

  updateJob(id: number, patch: Partial<NewJob>): void {
    this.db.update(jobs).set(patch).where(eq(jobs.id, id)).run();
  }

  /** The draw of the class's newest job that has one (the next job's draw follows it). */
  /** When the newest job was submitted (ids follow submission order). */
  lastSubmittedAt(): number | undefined {
    const row = this.db
      .select({ submittedAt: jobs.submittedAt })
      .from(jobs)
      .orderBy(desc(jobs.id))
      .limit(1)
      .get();
    return row?.submittedAt ?? undefined;
  }

  lastDraw(className: string): number | undefined {
    const row = this.db
      .select({ draw: jobs.draw })
      .from(jobs)
      .where(and(eq(jobs.className, className), isNotNull(jobs.draw)))
      .orderBy(desc(jobs.id))
      .limit(1)
      .get();
    return row?.draw ?? undefined;
  }

  /** The job submitted with this Idempotency-Key, if any (the key's unique index finds it). */
  jobByIdempotencyKey(key: string): JobRow | undefined {
    return this.db.select().from(jobs).where(eq(jobs.idempotencyKey, key)).get();
  }

  getJob(id: number): JobRow | undefined {
    return this.db.select().from(jobs).where(eq(jobs.id, id)).get();
  }

  activeJobs(): JobRow[] {
    return this.db
      .select()
      .from(jobs)
      .where(inArray(jobs.state, ['waiting', 'running']))
      .all();
  }

  /**
   * The newest `limit` jobs, oldest first. Jobs are never pruned: taking the oldest would hide every job
   * submitted after the first `limit` from `boa jobs list`. With order 'ended', the `limit` that ended
   * last, newest first: a long job failing now is among the latest failures, whenever it was submitted.
   */
  listJobs(limit: number, filter: JobFilter = {}): JobRow[] {
    const where = and(
      filter.states && filter.states.length > 0 ? inArray(jobs.state, filter.states) : undefined,
      filter.className === undefined ? undefined : eq(jobs.className, filter.className),
      filter.name === undefined ? undefined : eq(jobs.name, filter.name),
      filter.beforeId === undefined ? undefined : lt(jobs.id, filter.beforeId),
    );
    const query = this.db.select().from(jobs).where(where);
    if (filter.order === 'ended') {
      // SQLite puts nulls (jobs not ended) last in a descending order.
      return query.orderBy(desc(jobs.finishedAt), desc(jobs.id)).limit(limit).all();
    }
    return query.orderBy(desc(jobs.id)).limit(limit).all().reverse();
  }

  countJobsByState(): Record<string, number> {
    const out: Record<string, number> = { waiting: 0, running: 0, done: 0, cancelled: 0, failed: 0, lost: 0 };
    const rows = this.db.$client
      .prepare('select state, count(*) as n from jobs group by state')
      .all() as Array<{ state: string; n: number }>;
    for (const r of rows) out[r.state] = r.n;
    return out;
  }

  /** Submissions after `since`, the rate estimator's evidence: the jobs' own and those imported from before them (history.ts). */
  submissionsSince(since: number): Array<{ className: string; submittedAt: number }> {
    const own = this.submissions.since(since);
    const past = this.history.since(since);
    return past.length === 0 ? own : [...past, ...own];
  }

  insertPlan(plan: typeof plans.$inferInsert): PlanRow {
    return this.db.insert(plans).values(plan).returning().get();
  }

  latestPlan(): PlanRow | undefined {
    return this.db.select().from(plans).orderBy(desc(plans.id)).limit(1).get();
  }

  getPlan(id: number): PlanRow | undefined {
    return this.db.select().from(plans).where(eq(plans.id, id)).get();
  }

  /** The tick's per-job write: only the columns a tick or a report changes. */
  saveJobState(job: JobStateColumns): void {
    this.hot.saveJob.run({
      ...job,
      widths: job.widths === null ? null : JSON.stringify(job.widths),
      allocation: JSON.stringify(job.allocation),
      epochTimedFromReport: job.epochTimedFromReport ? 1 : 0,
    });
  }

  /** Renews a self-launched job's lease. */
  touchJob(id: number, at: number): void {
    this.hot.touchJob.run(at, id);
  }

  setLastTick(now: number): void {
    this.hot.putSetting.run('lastTickAt', JSON.stringify(now), now);
  }

  /**
   * Deletes ledger rows, plans, resizes and ended jobs' report senders from before `time`, in one
   * transaction. Kept whatever their age: the latest plan, plans active jobs took their widths from, and
   * the last resize (it guards against sending one twice). Jobs are the service's history and stay. Returns rows deleted. When
   * ledger rows went, `time` is kept as LEDGER_PRUNED_BEFORE in the same transaction: a window read
   * later must not start before it (a longer window configured since would read the gap as unpaid).
   */
  pruneBefore(time: number, now = time): number {
    return this.transaction(() => {
      let deleted = 0;
      deleted += this.db.delete(allocationSamples).where(lt(allocationSamples.to, time)).run().changes;
      deleted += this.db.delete(ledgerNodes).where(lt(ledgerNodes.goneAt, time)).run().changes;
      if (deleted > 0 && time > (this.getSetting<number>(LEDGER_PRUNED_BEFORE) ?? 0))
        this.putSetting(LEDGER_PRUNED_BEFORE, time, now);
      deleted += this.db.$client
        .prepare(
          `DELETE FROM plans WHERE computed_at < ? AND id <> (SELECT max(id) FROM plans)
             AND id NOT IN (SELECT plan_id FROM jobs WHERE plan_id IS NOT NULL AND state IN ('waiting', 'running'))`,
        )
        .run(time).changes;
      deleted += this.db.$client
        .prepare('DELETE FROM resizes WHERE at < ? AND id <> (SELECT max(id) FROM resizes)')
        .run(time).changes;
      deleted += this.reportSequences.pruneBefore(time);
      return deleted;
    });
  }

  insertResize(row: typeof resizes.$inferInsert): ResizeRow {
    return this.db.insert(resizes).values(row).returning().get();
  }

  updateResize(id: number, patch: Partial<typeof resizes.$inferInsert>): void {
    this.db.update(resizes).set(patch).where(eq(resizes.id, id)).run();
  }

  lastResize(): ResizeRow | undefined {
    return this.db.select().from(resizes).orderBy(desc(resizes.id)).limit(1).get();
  }

  /** The latest node-group resizes, newest first (the dashboard's list). */
  recentResizes(limit: number): ResizeRow[] {
    return this.db.select().from(resizes).orderBy(desc(resizes.id)).limit(limit).all();
  }
}

/**
 * True when an insert failed because another job already has its Idempotency-Key: a concurrent
 * submission with the same key committed first. drizzle wraps the driver's error as its cause.
 */
export function isIdempotencyKeyTaken(error: unknown): boolean {
  for (
    let e = error as { code?: string; message?: string; cause?: unknown } | undefined;
    e;
    e = e.cause as never
  ) {
    if (e.code === 'SQLITE_CONSTRAINT_UNIQUE' && e.message?.includes('jobs.idempotency_key')) return true;
  }
  return false;
}
