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
