/**
 * A local replica's log is bounded: its stdout and stderr go to DATA_DIR/jobs/<id>/<generation>/<rank>.log,
 * beside the service's database, and a job printing in a loop wrote 2.4 GB in 7 seconds. Once the log
 * passes its cap, its last part is kept as <rank>.log.1 and the log starts again (logrotate's
 * copytruncate, catching up to the end before the truncate: the job keeps its open file, and writes
 * with O_APPEND land at the new end).
 */
import {
  fstatSync,
  ftruncateSync,
  readFileSync,
  readSync,
  renameSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import type { Logger } from 'pino';
import { readExit, recordFile } from './executor-records.ts';
import { logHistory } from './log-history.ts';

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
  /**
   * Where <rank>.log.1 begins in the log's history (log-history.ts: every byte it has had, each cut's
   * notice counted), and its length once the notice is written: a follower's cursor is such a byte.
   * Records from before 2026-12-01: absent.
   */
  readonly start?: number;
  readonly kept?: number;
}

export function readLogCut(file: string): LogCutRecord | undefined {
  try {
    const record = JSON.parse(readFileSync(`${file}.cut`, 'utf8')) as LogCutRecord;
    const known = [record.cuts, record.size, record.from].every(Number.isSafeInteger);
    const optional = [record.start, record.kept].every((n) => n === undefined || Number.isSafeInteger(n));
    return known && optional ? record : undefined;
  } catch {
    return undefined; // never cut (or by a boa from before the record)
  }
}

/** Said at a cut made while the job was writing: a write landing in the cut's last instant is lost. */
export const MAYBE_LOST_LINE = 'boa: lines may be missing here: the job was writing as its log was cut\n';

/**
 * A job that wrote this recently before a cut is taken to be writing through it. Above the file system's
 * coarse clock (the mtime a write sets lags by up to a jiffy, 4-10 ms).
 */
const RECENT_WRITE_MS = 50;

/** Past this much unread, the cut copies on asynchronously; within it, it copies and truncates at once. */
const SYNC_BYTES = 1024 * 1024;

/**
 * Cuts `file` if it is past the cap; true when it did. The job writes on meanwhile (its supervisor
 * opened the log with O_APPEND, and only the job holds that file): the cut copies the last keepBytes
 * into <rank>.log.1, then what the job wrote since, until its read finds the log's end, and truncates
 * right after that read. A copy then a truncate lost whatever came in the copy's window (found in a
 * trial: 1.1 MB at each cut). Now only a write landing between that last read and the truncate, two
 * system calls apart, is lost (no lock binds the job's writes, and the kernel has no truncate-if-unchanged).
 * Nothing is left to tell such a write apart, so when the job was writing just before or just after the
 * truncate, or had written in the 50 ms before, MAYBE_LOST_LINE is put at the cut; what lands in that
 * instant from a job quiet for 50 ms and paused again right after (a loaded machine) goes unmarked.
 * The 16 MiB copy is asynchronous, so it holds up neither the service's API nor its tick; the last
 * MiB at most is copied synchronously, so nothing runs between the final read and the truncate.
 */
export async function capLog(file: string, cap: LogCap): Promise<boolean> {
  try {
    if ((await stat(file)).size <= cap.capBytes) return false;
  } catch {
    return false; // gone meanwhile (its job's folder removed)
  }
  const log = await open(file, 'r+');
  const kept = await open(`${file}.1.tmp`, 'w+'); // read too: its last byte, for the notice
  try {
    const { size } = await log.stat();
    const from = size - Math.min(size, cap.keepBytes);
    let at = from;
    // Asynchronously while far behind; a job writing faster than a copy is bounded by the passes.
    for (let pass = 0; pass < 16; pass++) {
      const end = (await log.stat()).size;
      if (end - at <= SYNC_BYTES) break;
      at = await copyRange(log, kept, at, end);
    }
    // From here to the truncate, nothing else runs (no await): each step is one call.
    at = copyToEnd(log.fd, kept.fd, at);
    // The log began at this byte of its history: past the .1 the last cut kept (read before it goes).
    const began = logHistory(file).logFrom;
    renameSync(`${file}.1.tmp`, `${file}.1`);
    // Recorded before the truncate: a follower that sees the log shrink finds this cut's record. What the
    // job wrote meanwhile goes to <rank>.log.1 too (a follower reads that to its end).
    const cuts = (readLogCut(file)?.cuts ?? 0) + 1;
    const record: LogCutRecord = { cuts, size: at, from, start: began + from };
    writeRecord(file, record);
    const recorded = at;
    // Taken before the last copy, so the copy and the truncate stay two system calls apart.
    const lastWriteAgoMs = Date.now() - fstatSync(log.fd).mtimeMs;
    at = copyToEnd(log.fd, kept.fd, at);
    ftruncateSync(log.fd, 0);
    // Bytes came while the record was written (tens of microseconds), or since the truncate, or the job
    // wrote just before: a job that writes often can land a write in the last instant unseen (found in
    // CI: a job writing each millisecond lost a line, unmarked, with the process paused in that instant).
    const writing = at > recorded || fstatSync(log.fd).size > 0 || lastWriteAgoMs < RECENT_WRITE_MS;
    // At the end of what was kept, on a line of its own: in the log it followed the job's next bytes,
    // a fragment of a line as often as not (found in a trial).
    const last = Buffer.alloc(1);
    const partial = at > from && readSync(kept.fd, last, 0, 1, at - from - 1) === 1 && last[0] !== 0x0a;
    const name = file.split('/').pop();
    const notice = `boa: this log passed ${mib(cap.capBytes)} MiB and was cut here: the ${mib(cap.keepBytes)} MiB above are kept in ${name}.1, what follows is in ${name}\n`;
    writeSync(kept.fd, `${partial ? '\n' : ''}${writing ? MAYBE_LOST_LINE : ''}${notice}`);
    // Complete now: where the new log begins in the history is known.
    writeRecord(file, { ...record, kept: fstatSync(kept.fd).size });
  } finally {
    await kept.close();
    await log.close();
  }
  return true;
}

function writeRecord(file: string, record: LogCutRecord): void {
  writeFileSync(`${file}.cut.tmp`, JSON.stringify(record));
  renameSync(`${file}.cut.tmp`, `${file}.cut`);
}

const mib = (bytes: number) => (bytes / MiB).toFixed(bytes < MiB ? 2 : 0);

/** Appends `log`'s bytes from `from` to `to` to `kept`; where it got to. */
async function copyRange(log: FileHandle, kept: FileHandle, from: number, to: number): Promise<number> {
  const buffer = Buffer.alloc(Math.min(to - from, SYNC_BYTES));
  let at = from;
  while (at < to) {
    const { bytesRead } = await log.read(buffer, 0, Math.min(buffer.length, to - at), at);
    if (bytesRead === 0) break;
    await kept.write(buffer, 0, bytesRead);
    at += bytesRead;
  }
  return at;
}

/** Appends `log`'s bytes from `from` to `kept` until a read finds its end; where that is. */
function copyToEnd(log: number, kept: number, from: number): number {
  const buffer = Buffer.alloc(64 * 1024);
  let at = from;
  for (;;) {
    const read = readSync(log, buffer, 0, buffer.length, at);
    if (read === 0) return at;
    writeSync(kept, buffer, 0, read);
    at += read;
  }
}

/** What capReplicaLogs needs of a replica. */
interface ReplicaLogRef {
  readonly jobId: number;
  readonly generation: number;
  readonly rank: number;
  readonly dir: string;
  readonly alive: boolean;
}

/**
 * Cuts the logs of the running replicas that passed the cap, saying so in the service's log. One whose
 * exit is recorded is not cut: it writes no more, and its flag can be a pass old (found in a trial: a
 * log cut 0.7 s after its replica's exit, its traceback moved to <rank>.log.1).
 */
export async function capReplicaLogs(
  replicas: Iterable<ReplicaLogRef>,
  cap: LogCap,
  logger: Logger,
): Promise<void> {
  for (const replica of [...replicas]) {
    if (!replica.alive || readExit(replica.dir, replica.rank) !== undefined) continue;
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
