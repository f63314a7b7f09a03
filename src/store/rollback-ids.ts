import { statSync, utimesSync } from 'node:fs';
import Database from 'better-sqlite3';
import { keepJobIdsAbove } from './job-ids.ts';

/**
 * Before a rollback puts `copy` in place of the newer `file`: the copy numbers its next job above every
 * job the newer file knows. Jobs submitted since the upgrade are not in the copy, but their pods, Services,
 * Secrets and log folders may still be about (on EKS a folder exists only for archived logs), and a new
 * job taking one of their ids would take those for its own. Done in the copy before it is renamed in, so
 * a crash at any step leaves either the newer file in place or a copy already raised.
 */
export function raiseCopyJobIds(file: string, copy: string): number {
  const highest = highestJobId(file);
  // The copy's time says when it was written (the refusal, the log, which copies are pruned): kept.
  const { atime, mtime } = statSync(copy);
  const db = new Database(copy, { fileMustExist: true });
  try {
    db.pragma('synchronous = FULL');
    keepJobIdsAbove(db, highest);
  } finally {
    db.close();
    utimesSync(copy, atime, mtime);
  }
  return highest;
}

/** The highest job id `file` ever gave (its sequence, else its newest row); 0 when it has no jobs table. */
function highestJobId(file: string): number {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const has = (name: string) =>
      db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
    const seq = has('sqlite_sequence')
      ? db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'jobs'").pluck().get()
      : undefined;
    const max = has('jobs') ? db.prepare('SELECT max(id) FROM jobs').pluck().get() : undefined;
    return Math.max(Number(seq ?? 0), Number(max ?? 0));
  } finally {
    db.close();
  }
}
