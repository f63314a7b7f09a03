import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

/** The folder's name in a job's folder, beside its generations' (numbered) log folders. */
const CHECKPOINT = 'checkpoint';

/**
 * Where a local job given no checkpoint location (no --checkpoint) keeps its checkpoints:
 * `<data>/jobs/<id>/checkpoint/`, its own and kept across its generations, since boa restarts a job's
 * processes at every rescale. Without one, a script checkpointing into its working directory (shared
 * by every job with the same --workdir) resumed another job's state (found in a newcomer trial).
 */
export function defaultCheckpointDir(jobsDir: string, jobId: number): string {
  return join(jobsDir, String(jobId), CHECKPOINT);
}

/** Made (owner only, as the logs) before a replica is started with it; an existing one is kept. */
export function makeDefaultCheckpointDir(jobsDir: string, jobId: number): string {
  const dir = defaultCheckpointDir(jobsDir, jobId);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}
