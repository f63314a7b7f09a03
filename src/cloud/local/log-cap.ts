/**
 * A local replica's log is bounded: its stdout and stderr go to DATA_DIR/jobs/<id>/<generation>/<rank>.log,
 * beside the service's database, and a job printing in a loop wrote 2.4 GB in 7 seconds. Once the log
 * passes its cap, its last part is kept as <rank>.log.1 and the log starts again (logrotate's
 * copytruncate: the job keeps its open file, and writes with O_APPEND land at the new end).
 */
import type { Logger } from 'pino';
import {
  appendFileSync,
  closeSync,
  ftruncateSync,
  openSync,
  readSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { recordFile } from './executor-records.ts';

export interface LogCap {
  /** A log past this many bytes is cut. */
  readonly capBytes: number;
  /** The last this many bytes of a cut log are kept as <rank>.log.1 (the part before it is dropped). */
  readonly keepBytes: number;
  /** How often the executor checks its running replicas' logs. */
  readonly checkMs: number;
}

const MiB = 1024 * 1024;

/** 64 MiB a log and 16 MiB of the part before it, checked every 2 s. */
export const DEFAULT_LOG_CAP: LogCap = { capBytes: 64 * MiB, keepBytes: 16 * MiB, checkMs: 2000 };

/** Cuts `file` if it is past the cap; true when it did. What the job writes during the cut is lost. */
export function capLog(file: string, cap: LogCap): boolean {
  let fd: number;
  try {
    if (statSync(file).size <= cap.capBytes) return false;
    fd = openSync(file, 'r+');
  } catch {
    return false; // gone meanwhile (its job's folder removed)
  }
  try {
    const size = statSync(file).size;
    const keep = Math.min(size, cap.keepBytes);
    const tail = Buffer.alloc(keep);
    readSync(fd, tail, 0, keep, size - keep);
    writeFileSync(`${file}.1.tmp`, tail);
    renameSync(`${file}.1.tmp`, `${file}.1`);
    ftruncateSync(fd, 0);
  } finally {
    closeSync(fd);
  }
  const mib = (bytes: number) => (bytes / MiB).toFixed(bytes < MiB ? 2 : 0);
  appendFileSync(
    file,
    `boa: this log passed ${mib(cap.capBytes)} MiB and was cut; its last ${mib(cap.keepBytes)} MiB before the cut are in ${file.split('/').pop()}.1\n`,
  );
  return true;
}

/** What capReplicaLogs needs of a replica. */
interface ReplicaLogRef {
  readonly jobId: number;
  readonly generation: number;
  readonly rank: number;
  readonly dir: string;
  readonly alive: boolean;
}

/** Cuts the logs of the running replicas that passed the cap, saying so in the service's log. */
export function capReplicaLogs(replicas: Iterable<ReplicaLogRef>, cap: LogCap, logger: Logger): void {
  for (const replica of replicas) {
    if (!replica.alive) continue;
    const file = recordFile(replica.dir, replica.rank, 'log');
    const { jobId, generation, rank } = replica;
    try {
      if (capLog(file, cap))
        logger.warn({ event: 'replica_log_cut', jobId, generation, rank }, 'log past its cap: cut');
    } catch (error) {
      logger.warn({ event: 'replica_log_cut_failed', file, error: (error as Error).message }, 'log not cut');
    }
  }
}
