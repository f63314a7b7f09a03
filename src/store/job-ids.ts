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
