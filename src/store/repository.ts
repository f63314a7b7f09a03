import { and, desc, eq, gt, inArray, isNull, lt, notInArray } from 'drizzle-orm';
import type { ClassProfile } from '../core/profile.ts';
import type { Db } from './db.ts';
import { allocationSamples, jobClasses, jobs, ledgerNodes, plans, resizes, settings } from './schema.ts';

export type JobState = 'waiting' | 'running' | 'done' | 'cancelled';
export type JobRow = typeof jobs.$inferSelect;
export type NewJob = typeof jobs.$inferInsert;
export type PlanRow = typeof plans.$inferSelect;
export type ResizeRow = typeof resizes.$inferSelect;

/**
 * Every read and write of the service's state. Methods that change more than one row run in one
 * transaction, so a crash leaves either all of a change or none of it.
 */
export class Repository {
  constructor(readonly db: Db) {}

  transaction<T>(fn: () => T): T {
    return this.db.$client.transaction(fn)();
  }

  getSetting<T>(key: string): T | undefined {
    const row = this.db.select().from(settings).where(eq(settings.key, key)).get();
    return row?.value as T | undefined;
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

  insertJob(job: NewJob): JobRow {
    return this.db.insert(jobs).values(job).returning().get();
  }

  updateJob(id: number, patch: Partial<NewJob>): void {
    this.db.update(jobs).set(patch).where(eq(jobs.id, id)).run();
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

  listJobs(limit: number, state?: JobState): JobRow[] {
    const query = this.db.select().from(jobs);
    const filtered = state ? query.where(eq(jobs.state, state)) : query;
    return filtered.orderBy(jobs.id).limit(limit).all();
  }

  countJobsByState(): Record<string, number> {
    const out: Record<string, number> = { waiting: 0, running: 0, done: 0, cancelled: 0 };
    const rows = this.db.$client
      .prepare('select state, count(*) as n from jobs group by state')
      .all() as Array<{ state: string; n: number }>;
    for (const r of rows) out[r.state] = r.n;
    return out;
  }

  /** Submissions per class since a time: the rate estimator's evidence. */
  submissionsSince(since: number): Array<{ className: string; submittedAt: number }> {
    return this.db
      .select({ className: jobs.className, submittedAt: jobs.submittedAt })
      .from(jobs)
      .where(gt(jobs.submittedAt, since))
      .all();
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

  /** Records the nodes seen now; nodes no longer listed are closed at `now` (billing stops no earlier). */
  observeNodes(nodes: ReadonlyArray<{ id: string; gpus: number; launchedAt: number }>, now: number): void {
    for (const node of nodes) {
      this.db
        .insert(ledgerNodes)
        .values({ id: node.id, gpus: node.gpus, launchedAt: node.launchedAt, lastSeenAt: now })
        .onConflictDoUpdate({ target: ledgerNodes.id, set: { lastSeenAt: now, goneAt: null } })
        .run();
    }
    const ids = nodes.map((n) => n.id);
    this.db
      .update(ledgerNodes)
      .set({ goneAt: now })
      .where(
        ids.length
          ? and(isNull(ledgerNodes.goneAt), notInArray(ledgerNodes.id, ids))
          : isNull(ledgerNodes.goneAt),
      )
      .run();
  }

  nodesOverlapping(from: number): Array<typeof ledgerNodes.$inferSelect> {
    return this.db.select().from(ledgerNodes).where(gt(ledgerNodes.lastSeenAt, from)).all();
  }

  recordAllocation(from: number, to: number, gpus: number): void {
    if (to > from) this.db.insert(allocationSamples).values({ from, to, gpus }).run();
  }

  allocationsSince(from: number): Array<{ from: number; to: number; gpus: number }> {
    return this.db.select().from(allocationSamples).where(gt(allocationSamples.to, from)).all();
  }

  pruneBefore(time: number): void {
    this.db.delete(allocationSamples).where(lt(allocationSamples.to, time)).run();
    this.db.delete(ledgerNodes).where(lt(ledgerNodes.goneAt, time)).run();
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
}
