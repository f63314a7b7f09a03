import type Database from 'better-sqlite3';
import { readMigrationFiles } from 'drizzle-orm/migrator';

/**
 * Applies the migrations in `folder` the database lacks, in one transaction, as drizzle's migrator does
 * (its table `__drizzle_migrations`, its rule: those newer than the newest applied), so databases of
 * every boa read the same. Not drizzle's own: after a failure it ran ROLLBACK unconditionally, and when
 * SQLite had already rolled back (a full disk does, at a write or the commit) that threw "cannot rollback
 * - no transaction is active", which replaced the cause (found on a full volume).
 */
export function applyMigrations(client: Database.Database, folder: string): void {
  const migrations = readMigrationFiles({ migrationsFolder: folder });
  client.exec(
    'CREATE TABLE IF NOT EXISTS "__drizzle_migrations" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)',
  );
  const newest = client
    .prepare('SELECT created_at FROM "__drizzle_migrations" ORDER BY created_at DESC LIMIT 1')
    .pluck()
    .get() as number | string | null | undefined;
  const pending = migrations.filter((m) => newest == null || Number(newest) < m.folderMillis);
  if (pending.length === 0) return;
  const record = client.prepare('INSERT INTO "__drizzle_migrations" ("hash", "created_at") VALUES (?, ?)');
  client.exec('BEGIN');
  try {
    for (const migration of pending) {
      for (const statement of migration.sql) client.prepare(statement).run();
      record.run(migration.hash, migration.folderMillis);
    }
    client.exec('COMMIT');
  } catch (error) {
    if (client.inTransaction) {
      try {
        client.exec('ROLLBACK');
      } catch {
        // The caller closes the connection, which rolls the transaction back all the same.
      }
    }
    throw error;
  }
}
