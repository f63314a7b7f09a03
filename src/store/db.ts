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
 * WAL keeps readers (the API) from blocking the tick's writes; synchronous=FULL so a committed
 * transaction survives a kill -9 or a power cut.
 */
export function openDb(dataDir: string | ':memory:'): Db {
  let file = ':memory:';
  if (dataDir !== ':memory:') {
    mkdirSync(dataDir, { recursive: true });
    file = join(dataDir, 'boa.sqlite');
  }
  const client = new Database(file);
  client.pragma('journal_mode = WAL');
  client.pragma('synchronous = FULL');
  client.pragma('foreign_keys = ON');
  client.pragma('busy_timeout = 5000');
  const db = drizzle(client, { schema }) as Db;
  migrate(db, { migrationsFolder: MIGRATIONS });
  return db;
}
