import { open, stat, type FileHandle } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LogPosition } from '../../service/ports.ts';
import { readLogTailBytes } from './log-tail.ts';
import { readLogCut, type LogCutRecord } from './log-cap.ts';
import { cursorAt, logByteOf } from './log-cursor.ts';
import { type LogHistory, logHistory } from './log-history.ts';

/** A read of what a log gained: at most this much at once, so one chunk never holds a MiB of a burst. */
const CHUNK_BYTES = 64 * 1024;

/**
 * Said at the start of a follow asked from a place the log's cap cut away (cut twice since the follower
 * last read it, or more than <rank>.log.1 keeps behind its place): the lines after it come next.
 */
export const CUT_GAP_LINE =
  'boa: lines are missing here: the log was cut (its size cap) before this follow read them\n';

/** Said in a followed log where it was cut by something other than boa (truncate, copytruncate). */
export const HAND_CUT_LINE =
  'boa: lines may be missing here: the log was cut, not by boa, while this follow read it\n';

/**
 * A follow's unread bytes are gone (the log was cut twice between its polls, or it was further behind
 * than <rank>.log.1 keeps), or a cut came as it began to read <rank>.log.1: it ends there, as a broken
 * connection does, and its follower asks again from where it got to, answered with CUT_GAP_LINE and a
 * cursor for the place after it.
 * Said in the same answer, the line and the bytes after it were counted from a place they do not follow,
 * so a reconnect after them went on elsewhere (found in review: 58 bytes skipped mid-line, or lines twice).
 */
export class FollowBreakOff extends Error {
  constructor(file: string) {
    super(`${file}: lines this follow had not read were cut away; ask again from where it got to`);
  }
}

export interface FollowOptions {
  readonly tailLines: number;
  /** Start here (a byte of the file, as a cursor, and bytes past it), not at its last tailLines lines. */
  readonly from?: LogPosition;
  /** How often the file is checked for more (a file watch misses writes on some mounts; a poll does not). */
  readonly pollMs: number;
  /** True once the replica writes no more: its process ended, or it is not one this executor runs. */
  readonly ended: () => boolean;
  readonly signal: AbortSignal;
}

/**
 * `tail -f` of a local replica's log: its last lines (or from a position a follower got to), then what
 * it writes, with the place its text starts at (the follower's cursor), until it has ended and all it
 * wrote is read. The chunks are the file's bytes as written, never decoded: a follower counts the bytes
 * it got, and a log that is not UTF-8 must not move its place. A log cut by its cap (log-cap.ts:
 * copytruncate) is seen shorter than what was read or than its cut record says: the rest of what was
 * read from is in <rank>.log.1 (ending with the cut's notice), read on from the follower's place, then
 * the log from its beginning
 * (unless the job wrote the cut's size again within one poll: 64 MiB). Places are bytes of the log's
 * history (log-history.ts), so a follower that reconnects after a cut goes on in <rank>.log.1 from its
 * place, or is told of a gap with CUT_GAP_LINE. One that finds its unread bytes gone while it follows
 * breaks off there (FollowBreakOff): its follower asks again and is told of the gap so.
 * Undefined when the log does not exist.
 */
export function followLogFile(
  file: string,
  options: FollowOptions,
): { from: LogPosition; chunks: AsyncGenerator<Buffer>; gap?: true } | undefined {
  // The cuts counted around the read, again if one came between: the log read is that many cuts old.
  let record = readLogCut(file);
  let first = readLogTailBytes(file, options.tailLines);
  for (let again = 0; first && again < 3; again++) {
    const after = readLogCut(file);
    if ((after?.cuts ?? 0) === (record?.cuts ?? 0)) break;
    record = after;
    first = readLogTailBytes(file, options.tailLines);
  }
  if (!first) return undefined;
  const history = logHistory(file, record);
  const { cuts, logFrom } = history;
  const reached = options.from && logByteOf(options.from, logFrom);
  if (reached === undefined) {
    const start = first.size - first.bytes.length;
    return { from: cursorAt(logFrom + start), chunks: follow(file, { ...first, cuts }, options) };
  }
  // Before the log's beginning: cut since the follower's place, which is in <rank>.log.1 or gone.
  if (reached < logFrom) return fromKept(file, reached, history, options);
  // Past the log's end: cut without a record (by hand, or a boa from before records), or a byte it
  // never had. What it holds is new to the follower, read from its beginning; what lay between is gone.
  if (reached - logFrom > first.size) {
    const chunks = follow(file, { bytes: Buffer.alloc(0), size: 0, cuts }, options);
    return { from: cursorAt(logFrom), chunks, gap: true };
  }
  // From a byte a follower reached before (its connection broke): on from there, nothing twice.
  const chunks = follow(file, { bytes: Buffer.alloc(0), size: reached - logFrom, cuts }, options);
  return { from: cursorAt(reached), chunks };
}

/**
 * A follower's place from before the log's last cut: read on in <rank>.log.1 from it, then the log from
 * its beginning. One further back than <rank>.log.1 keeps (cut twice since, or behind its start) is
 * told so with CUT_GAP_LINE, then gets all it keeps; its cursor counts that line, so a later reconnect
 * still names the same place (where the log's history is too short for that, the answer says gap).
 */
function fromKept(
  file: string,
  reached: number,
  { cuts, keptFrom, keptBytes }: LogHistory,
  options: FollowOptions,
): { from: LogPosition; chunks: AsyncGenerator<Buffer>; gap?: true } {
  const gone = reached < keptFrom;
  const line = gone && keptFrom >= CUT_GAP_LINE.length ? Buffer.from(CUT_GAP_LINE) : Buffer.alloc(0);
  const from = gone ? keptFrom - line.length : reached;
  // The line's places are gone bytes' too: asked from the line's own cursor, a follower cut off inside
  // it gets the rest (found in review: the whole line again), the cursor kept for a cut there again;
  // from another cursor, a place it read to, since gone: the whole line.
  const cursor = cursorAt(from).cursor;
  const into = line.length > 0 && options.from?.cursor === cursor ? Math.max(0, reached - from) : 0;
  async function* chunks(): AsyncGenerator<Buffer> {
    const kept = await openKept(file, cuts);
    try {
      if (line.length > 0) yield line.subarray(into);
      yield* readRange(kept, gone ? 0 : reached - keptFrom, keptBytes, options.signal);
    } finally {
      await kept?.close();
    }
    yield* follow(file, { bytes: Buffer.alloc(0), size: 0, cuts }, options);
  }
  return {
    from: { cursor, skip: into },
    chunks: chunks(),
    ...(gone && line.length === 0 ? { gap: true as const } : {}),
  };
}

async function* follow(
  file: string,
  first: { bytes: Buffer; size: number; cuts: number },
  { pollMs, ended, signal }: FollowOptions,
): AsyncGenerator<Buffer> {
  if (first.bytes.length > 0) yield first.bytes;
  let offset = first.size;
  let cuts = first.cuts;
  // The log is the one `cuts` counts: a read that ends after a cut may hold the new log's bytes.
  const uncut = () => (readLogCut(file)?.cuts ?? 0) <= cuts;
  /** A cut came during a read (the log may have grown past its size since): read on in <rank>.log.1. */
  let cutWhileReading = false;
  while (!signal.aborted) {
    // Read before deciding it ended: what the replica wrote just before its exit is shown.
    const last = ended();
    let size: number;
    try {
      size = (await stat(file)).size;
    } catch {
      return; // its job's folder removed
    }
    // Cut: shorter than what was read, or a new cut recorded and the log shorter than it was then (the
    // job's next lines, or the cut's notice, can make it longer than what was read; before the record's
    // truncate it is not shorter, and is read on as it is).
    const record = readLogCut(file);
    if (size < offset || (record && record.cuts > cuts && (size < record.size || cutWhileReading))) {
      cuts = yield* beforeCut(file, offset, cuts, record, signal);
      offset = 0;
      cutWhileReading = false;
    }
    for await (const bytes of readRange(file, offset, size, signal, uncut)) {
      offset += bytes.length;
      yield bytes;
    }
    // Cut during the read: what was read up to it is the old log's, the rest is in <rank>.log.1.
    if (!uncut()) {
      cutWhileReading = true;
      continue;
    }
    if (last) return;
    await sleep(pollMs, undefined, { signal }).catch(() => undefined);
  }
}

/**
 * What the log held past `offset` when it was cut: the rest of <rank>.log.1 from there. Where that is
 * gone (cut twice since, the count says so, or the follower was further behind than <rank>.log.1 keeps),
 * FollowBreakOff; a cut with no record, CUT_GAP_LINE. Returns the cuts counted now.
 */
async function* beforeCut(
  file: string,
  offset: number,
  cuts: number,
  record: LogCutRecord | undefined,
  signal: AbortSignal,
): AsyncGenerator<Buffer, number> {
  // One cut past the follower's count: this one. Level with it: the follower's first read fell between
  // this cut's record and its truncate, so what it read was the log before this cut. More: cut twice.
  if (!record) {
    // Cut without a record (by hand: copytruncate): said here, and read on from the log's beginning.
    // Broken off instead, a log written again past the follower's place before it asked again was read
    // on from there, its first lines lost with no gap said (found in review). Said so, the follower's
    // place counts what it read before: a reconnect after this may skip or repeat lines (no record
    // tells where the new log began).
    yield Buffer.from(HAND_CUT_LINE);
    return cuts;
  }
  if (record.cuts - cuts > 1 || offset < record.from) throw new FollowBreakOff(file);
  const kept = await openKept(file, record.cuts);
  try {
    // Past its end: the follower had read bytes the cut then lost; nothing more is kept of them.
    yield* readRange(kept, offset - record.from, Infinity, signal);
  } finally {
    await kept?.close();
  }
  return record.cuts;
}

/**
 * <rank>.log.1 as the cut counted `cuts` left it, open for the whole of its read: a cut meanwhile puts
 * another in its place, which the follower's place is not counted in (reopened by name for each chunk,
 * a read spliced the two: found in review). A later cut made already: FollowBreakOff, to be placed anew.
 */
async function openKept(file: string, cuts: number): Promise<FileHandle | undefined> {
  const kept = await open(`${file}.1`, 'r').catch(() => undefined); // removed by hand: nothing kept
  if ((readLogCut(file)?.cuts ?? 0) === cuts) return kept;
  await kept?.close();
  throw new FollowBreakOff(file);
}

/** The file's bytes from `from` to `to` (or as far as it holds), a chunk at a time, through one handle. */
async function* readRange(
  file: string | FileHandle | undefined,
  from: number,
  to: number,
  signal: AbortSignal,
  /** Checked after each read: false, the bytes just read may be another file's (a cut): not given. */
  intact: () => boolean = () => true,
): AsyncGenerator<Buffer> {
  const handle = typeof file === 'string' ? await open(file, 'r').catch(() => undefined) : file;
  if (!handle) return; // gone meanwhile
  try {
    for (let at = from; at < to && !signal.aborted;) {
      const buffer = Buffer.alloc(Math.min(to - at, CHUNK_BYTES));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, at);
      if (bytesRead === 0 || !intact()) return; // cut meanwhile: the next check starts it again
      at += bytesRead;
      yield buffer.subarray(0, bytesRead);
    }
  } finally {
    if (handle !== file) await handle.close();
  }
}
