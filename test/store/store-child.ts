/**
 * A process that opens a data dir as the service does and stops dead at one point, for the kill -9
 * tests in failure-review.test.ts: `<dataDir> sql <text>` blocks when SQLite is handed a statement
 * holding `text` (a migration's, mid-transaction), `rename <text>` when a file is renamed to a name
 * holding it (a copy about to get its final name), `written <n>` once the store is open and n plans are
 * committed (in the WAL). It prints `stopped` and waits to be killed.
 */
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import Database from 'better-sqlite3';
import { openStore } from '../../src/store/db.ts';
import { seedPlans } from './schema-versions.ts';

const [dataDir, point, arg] = process.argv.slice(2) as [string, string, string];

function stop(): never {
  process.stdout.write('stopped\n');
  // Blocks the one thread: nothing after this point runs, as if the process were killed here.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
  throw new Error('unreachable');
}

if (point === 'sql') {
  const prepare = Database.prototype.prepare;
  Database.prototype.prepare = function (this: Database.Database, source: string) {
    if (source.includes(arg)) stop();
    return prepare.call(this, source);
  } as typeof prepare;
} else if (point === 'rename') {
  const renameSync = fs.renameSync;
  fs.renameSync = (from, to) => {
    if (String(to).includes(arg)) stop();
    renameSync(from, to);
  };
  syncBuiltinESMExports();
}

const store = openStore(dataDir);
if (point === 'written') {
  seedPlans(store.db.$client, Number(arg));
  stop();
}
process.stdout.write('opened\n');
store.close();
