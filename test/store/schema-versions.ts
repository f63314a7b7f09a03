/**
 * Databases as another version of boa leaves them: an older one's migrations are the committed ones up
 * to some tag, a newer one's have one more that this version does not know.
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';

export const MIGRATIONS = resolve(import.meta.dirname, '../../src/store/migrations');

/** The committed migrations' tags, oldest first. */
export const TAGS = (
  JSON.parse(readFileSync(join(MIGRATIONS, 'meta', '_journal.json'), 'utf8')) as {
    entries: Array<{ tag: string }>;
  }
).entries.map((e) => e.tag);

/** Copies the committed migrations into `folder` with a journal that stops before `tag`: an older boa's set. */
export function migrationsBefore(tag: string, folder: string): string {
  const at = TAGS.indexOf(tag);
  if (at <= 0) throw new Error(`no migration ${tag} after the first`);
  cpSync(MIGRATIONS, folder, { recursive: true });
  const journalFile = join(folder, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(journalFile, 'utf8')) as { entries: unknown[] };
  journal.entries = journal.entries.slice(0, at);
  writeFileSync(journalFile, JSON.stringify(journal));
  return folder;
}

/** Opens `file` migrated as a boa from before `tag` left it (WAL, as boa opens it); `scratch` holds its migrations. */
export function olderDatabase(file: string, tag: string, scratch: string): Database.Database {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  migrate(drizzle(db), { migrationsFolder: migrationsBefore(tag, scratch) });
  return db;
}

/** As a newer boa leaves `file`: a migration this version does not know, and a plan since. */
export function migrateAsNewer(file: string): void {
  const db = new Database(file);
  db.prepare('INSERT INTO __drizzle_migrations (hash, created_at) VALUES (?, ?)').run(
    'f'.repeat(64),
    Date.UTC(2099, 0, 1),
  );
  seedPlans(db, 1);
  db.close();
}

/** `n` plans, rows to find again in a copy. */
export function seedPlans(db: Database.Database, n: number): void {
  const insert = db.prepare(
    `INSERT INTO plans (computed_at, solver, budget, planning_budget, min_feasible_budget,
       predicted_avg_jct_seconds, predicted_gpu_hours_per_hour, plan, inputs, solve_ms)
     VALUES (?, 'exact', 40, 40, 8, 100, 39, '{}', '{}', 1)`,
  );
  for (let i = 0; i < n; i++) insert.run(i);
}
