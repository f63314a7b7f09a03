/**
 * A local replica's log is bounded: its stdout and stderr go to DATA_DIR/jobs/<id>/<generation>/<rank>.log,
 * beside the service's database, and a job printing in a loop wrote 2.4 GB in 7 seconds. Once the log
 * passes its cap, its last part is kept as <rank>.log.1 and the log starts again (logrotate's
 * copytruncate: the job keeps its open file, and writes with O_APPEND land at the new end).
 */
import { readFileSync } from 'node:fs';
import { open, rename, stat, writeFile, appendFile } from 'node:fs/promises';
import type { Logger } from 'pino';
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

/**
 * A log's cuts so far, its size at the last, and the byte of it at which <rank>.log.1 begins, kept in
 * <rank>.log.cut: a follower that finds the log cut reads on in <rank>.log.1 from its place there, and
 * knows from the count whether it missed a cut in between (its place then gone too).
 */
export interface LogCutRecord {
  readonly cuts: number;
  readonly size: number;
  readonly from: number;
}

export function readLogCut(file: string): LogCutRecord | undefined {
  try {
    const record = JSON.parse(readFileSync(`${file}.cut`, 'utf8')) as LogCutRecord;
    return [record.cuts, record.size, record.from].every(Number.isSafeInteger) ? record : undefined;
  } catch {
    return undefined; // never cut (or by a boa from before the record)
  }
}

/**
 * Cuts `file` if it is past the cap; true when it did. What the job writes during the cut is lost.
 * Asynchronous: the 16 MiB copy must not hold up the service's event loop (its API, its tick).
 */
export async function capLog(file: string, cap: LogCap): Promise<boolean> {
  try {
    if ((await stat(file)).size <= cap.capBytes) return false;
  } catch {
    return false; // gone meanwhile (its job's folder removed)
  }
  const handle = await open(file, 'r+');
  try {
    const { size } = await handle.stat();
    const keep = Math.min(size, cap.keepBytes);
    const tail = Buffer.alloc(keep);
    await handle.read(tail, 0, keep, size - keep);
    await writeFile(`${file}.1.tmp`, tail);
    await rename(`${file}.1.tmp`, `${file}.1`);
    // Recorded before the truncate: a follower that sees the log shrink finds this cut's record.
    const record: LogCutRecord = { cuts: (readLogCut(file)?.cuts ?? 0) + 1, size, from: size - keep };
    await writeFile(`${file}.cut.tmp`, JSON.stringify(record));
    await rename(`${file}.cut.tmp`, `${file}.cut`);
    await handle.truncate(0);
  } finally {
    await handle.close();
  }
  const mib = (bytes: number) => (bytes / MiB).toFixed(bytes < MiB ? 2 : 0);
  await appendFile(
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
export async function capReplicaLogs(
  replicas: Iterable<ReplicaLogRef>,
  cap: LogCap,
  logger: Logger,
): Promise<void> {
  for (const replica of [...replicas]) {
    if (!replica.alive) continue;
    const file = recordFile(replica.dir, replica.rank, 'log');
    const { jobId, generation, rank } = replica;
    try {
      if (await capLog(file, cap))
        logger.warn({ event: 'replica_log_cut', jobId, generation, rank }, 'log past its cap: cut');
    } catch (error) {
      logger.warn({ event: 'replica_log_cut_failed', file, error: (error as Error).message }, 'log not cut');
    }
  }
}
