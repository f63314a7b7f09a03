import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type Database from 'better-sqlite3';

/**
 * Job ids are never reused while anything of an old job is left: a data dir's job folders (the local
 * executor's logs and replica records) or pods kept for their logs on Kubernetes. A database started
 * afresh (--init, or removed by hand) numbered from 1 again, into an old job's folder or onto its pods
 * (a new job 1 adopting the old one's finished pod, done before it ran). Raises the next id above
 * `highest`; true when it had to.
 */
export function keepJobIdsAbove(client: Database.Database, highest: number): boolean {
  const seq = client.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'jobs'").pluck().get() as
    number | undefined;
  if (highest <= (seq ?? 0)) return false;
  if (seq === undefined)
    client.prepare("INSERT INTO sqlite_sequence (name, seq) VALUES ('jobs', ?)").run(highest);
  else client.prepare("UPDATE sqlite_sequence SET seq = ? WHERE name = 'jobs'").run(highest);
  return true;
}

/** The highest job id handed out, kept beside the job folders (`<data>/jobs/.highest-id`). */
const MARK = '.highest-id';

/** The id the mark holds (0 without one, or when it cannot be read). */
export function readJobIdMark(jobsDir: string): number {
  try {
    // Digits only, as the job folders' names: "1e3" or a 16-digit id is not a mark boa wrote.
    const text = readFileSync(join(jobsDir, MARK), 'utf8').trim();
    return /^\d{1,15}$/.test(text) ? Number(text) : 0;
  } catch {
    return 0;
  }
}

/**
 * Keeps the highest job id handed out outside the database, so a database put back by hand (a copy from
 * before an upgrade, a snapshot) still numbers new jobs above those submitted since: on Kubernetes a job
 * has a folder only once a pod's log is archived, and a new job of an old id takes its pods, Service and
 * logs (found in review). Best effort: a mark that cannot be written leaves the folders' guard.
 */
export class JobIdMark {
  private highest: number;

  constructor(private readonly jobsDir: string) {
    this.highest = readJobIdMark(jobsDir);
  }

  record(id: number): void {
    if (id <= this.highest) return;
    const file = join(this.jobsDir, MARK);
    try {
      // Owner-only, as the job folders it holds: often the first thing made in it (docs/security.md).
      mkdirSync(this.jobsDir, { recursive: true, mode: 0o700 });
      writeFileSync(`${file}.tmp`, `${id}\n`);
      renameSync(`${file}.tmp`, file);
      this.highest = id;
    } catch {
      // A read-only or full volume: the database and the job folders still guard ids as before.
    }
  }
}
