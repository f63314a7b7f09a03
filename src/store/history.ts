import { asc, eq, gt, lt } from 'drizzle-orm';
import type { Db } from './db.ts';
import { historyImports, pastArrivals } from './schema.ts';

export type HistoryImportRow = typeof historyImports.$inferSelect;
export type NewHistoryImport = Omit<typeof historyImports.$inferInsert, 'id' | 'arrivals'>;

/** Imported submissions from before the service's own record (schema.ts historyImports). */
export class PastArrivals {
  constructor(private readonly db: Db) {}

  imports(): HistoryImportRow[] {
    return this.db.select().from(historyImports).orderBy(asc(historyImports.id)).all();
  }

  byDigest(digest: string): HistoryImportRow | undefined {
    return this.db.select().from(historyImports).where(eq(historyImports.digest, digest)).get();
  }

  /** Writes the import and its arrivals; the caller's transaction makes it all or nothing. */
  insert(row: NewHistoryImport, arrivals: ReadonlyArray<{ className: string; submittedAt: number }>) {
    const saved = this.db
      .insert(historyImports)
      .values({ ...row, arrivals: arrivals.length })
      .returning()
      .get();
    const insert = this.db.$client.prepare(
      'INSERT INTO past_arrivals (import_id, class_name, submitted_at) VALUES (?, ?, ?)',
    );
    for (const a of arrivals) insert.run(saved.id, a.className, a.submittedAt);
    return saved;
  }

  /** Removes an import and its arrivals (inside the caller's transaction); false if there is none. */
  delete(id: number): boolean {
    this.db.delete(pastArrivals).where(eq(pastArrivals.importId, id)).run();
    return this.db.delete(historyImports).where(eq(historyImports.id, id)).run().changes > 0;
  }

  since(time: number): Array<{ className: string; submittedAt: number }> {
    return this.db
      .select({ className: pastArrivals.className, submittedAt: pastArrivals.submittedAt })
      .from(pastArrivals)
      .where(gt(pastArrivals.submittedAt, time))
      .all();
  }

  countSince(time: number): number {
    return this.db.$client
      .prepare('SELECT count(*) FROM past_arrivals WHERE submitted_at > ?')
      .pluck()
      .get(time) as number;
  }

  /** Arrivals no estimate reads any more; the imports stay listed. */
  pruneBefore(time: number): number {
    return this.db.delete(pastArrivals).where(lt(pastArrivals.submittedAt, time)).run().changes;
  }
}
