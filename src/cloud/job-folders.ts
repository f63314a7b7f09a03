import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Both executors keep a job's logs (and the local one its records) in `<data>/jobs/<id>/`: the jobs with
 * such a folder, and a job's folder deleted once its logs are no longer wanted.
 */
export function jobsWithFolders(jobsDir: string | undefined): number[] {
  if (!jobsDir) return [];
  let names: string[];
  try {
    names = readdirSync(jobsDir);
  } catch {
    return [];
  }
  return names
    .filter((name) => /^\d{1,15}$/.test(name))
    .map(Number)
    .sort((a, b) => a - b);
}

export function deleteJobFolder(jobsDir: string | undefined, jobId: number): void {
  if (!jobsDir) return;
  rmSync(join(jobsDir, String(jobId)), { recursive: true, force: true });
}

/** A job's generations whose folders are kept (the newest); older ones go as new ones are written. */
export const KEPT_GENERATIONS = 10;

/**
 * The folders of a job's generations older than its newest `keep`, none of whose replicas `inUse` or has
 * a pid record (a local one still stopping, or not adopted yet), are deleted: a local one holds up to
 * 80 MiB of logs a rank (the log's cap and its cut part), a Kubernetes archive 1 MiB a pod, and a job
 * restarted hundreds of times kept them all until it ended. Returns the generations deleted.
 */
export function pruneGenerations(
  jobsDir: string,
  jobId: number,
  keep: number,
  inUse: (generation: number) => boolean,
): number[] {
  const pruned: number[] = [];
  let names: string[];
  try {
    names = readdirSync(join(jobsDir, String(jobId)));
  } catch {
    return [];
  }
  const newestFirst = names
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .sort((a, b) => b - a);
  for (const generation of newestFirst.slice(keep)) {
    const dir = join(jobsDir, String(jobId), String(generation));
    if (inUse(generation)) continue;
    let files: string[];
    try {
      files = readdirSync(dir);
    } catch {
      continue;
    }
    if (files.some((name) => name.endsWith('.pid'))) continue;
    rmSync(dir, { recursive: true, force: true });
    pruned.push(generation);
  }
  return pruned;
}
