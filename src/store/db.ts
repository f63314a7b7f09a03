import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { type BetterSQLite3Database, drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import * as schema from './schema.ts';

export type Db = BetterSQLite3Database<typeof schema> & { $client: Database.Database };

const MIGRATIONS = resolve(dirname(fileURLToPath(import.meta.url)), 'migrations');

/**
 * Opens (creating if needed) the service's SQLite file and applies the committed migrations.
 * WAL keeps readers (the API) from blocking the tick's writes. synchronous=NORMAL: a committed
 * transaction survives a crash or kill -9 of the process (the OS holds it); only a power cut can lose
 * the last moments, never corrupt the file. FULL would fsync every tick.
 */
export function openDb(dataDir: string | ':memory:'): Db {
  let file = ':memory:';
  if (dataDir !== ':memory:') {
    mkdirSync(dataDir, { recursive: true });
    file = join(dataDir, 'boa.sqlite');
  }
  const client = new Database(file);
  client.pragma('journal_mode = WAL');
  client.pragma('synchronous = NORMAL');
  client.pragma('foreign_keys = ON');
  client.pragma('busy_timeout = 5000');
  const db = drizzle(client, { schema }) as Db;
  migrate(db, { migrationsFolder: MIGRATIONS });
  return db;
}
