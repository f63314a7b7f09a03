/**
 * Another process writing to boa's database, as a sqlite3 shell does: `<file> <holdMs>` takes the write
 * lock, writes a setting of its own (so a snapshot read before it is stale), says `locked`, holds the lock for
 * holdMs, commits, says `committed` and exits.
 */
import Database from 'better-sqlite3';

const [file, holdMs] = process.argv.slice(2) as [string, string];
const db = new Database(file, { fileMustExist: true });
db.exec('BEGIN IMMEDIATE');
db.prepare('INSERT INTO settings (key, value, updated_at) VALUES (?, ?, 0)').run(
  `writtenByAnother-${process.pid}`,
  '1',
);
process.stdout.write('locked\n');
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number(holdMs));
db.exec('COMMIT');
db.close();
process.stdout.write('committed\n');
