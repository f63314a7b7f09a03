import { TextDecoder } from 'node:util';
import { open, stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { LOG_START, LogCursorError, type LogPosition } from '../../service/ports.ts';
import { readLogTailWithSize } from './executor-records.ts';

/** A read of what a log gained: at most this much at once, so one chunk never holds a MiB of a burst. */
const CHUNK_BYTES = 64 * 1024;

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
 * it writes, with the byte its text starts at (the follower's cursor), until it has ended and all it
 * wrote is read. A log cut by its cap (log-cap.ts: copytruncate) is seen shorter than what was read,
 * and read again from its beginning (unless the job wrote past that point within one poll: 64 MiB).
 * Undefined when the log does not exist.
 */
export function followLogFile(
  file: string,
  options: FollowOptions,
): { from: LogPosition; chunks: AsyncGenerator<string>; gap?: true } | undefined {
  const reached = options.from && logByteOf(options.from);
  const first = readLogTailWithSize(file, options.tailLines);
  if (!first) return undefined;
  // Past the log's end: it was cut by its cap since (or the byte is not one it had). What it holds was
  // written after the cut, so all of it is new to the follower, read from its beginning; the lines
  // between its place and the cut are in <log>.1 (its last MiBs) or gone, said as a gap.
  if (reached !== undefined && reached > first.size) {
    const chunks = follow(file, { text: '', size: 0 }, options);
    return { from: { cursor: '0', skip: 0 }, chunks, gap: true };
  }
  // From a byte a follower reached before (its connection broke): on from there, nothing twice.
  if (reached !== undefined) {
    const chunks = follow(file, { text: '', size: reached }, options);
    return { from: { cursor: String(reached), skip: 0 }, chunks };
  }
  const start = first.size - Buffer.byteLength(first.text);
  return { from: { cursor: String(start), skip: 0 }, chunks: follow(file, first, options) };
}

/** The byte a position names: its cursor is a byte of the file (as this executor gives it), or its start. */
export function logByteOf({ cursor, skip }: LogPosition): number {
  if (cursor === LOG_START) return skip;
  if (!/^\d{1,15}$/.test(cursor))
    throw new LogCursorError(cursor, `a local log's cursor is "${LOG_START}" or a byte of it, e.g. 1024`);
  return Number(cursor) + skip;
}

async function* follow(
  file: string,
  first: { text: string; size: number },
  { pollMs, ended, signal }: FollowOptions,
): AsyncGenerator<string> {
  if (first.text) yield first.text;
  let offset = first.size;
  const decoder = new TextDecoder('utf-8');
  while (!signal.aborted) {
    // Read before deciding it ended: what the replica wrote just before its exit is shown.
    const last = ended();
    let size: number;
    try {
      size = (await stat(file)).size;
    } catch {
      return; // its job's folder removed
    }
    if (size < offset) offset = 0;
    while (offset < size && !signal.aborted) {
      const { text, bytes } = await readRange(file, offset, Math.min(size, offset + CHUNK_BYTES), decoder);
      if (bytes === 0) break; // cut meanwhile: the next check starts it again
      offset += bytes;
      if (text) yield text;
    }
    if (last) {
      const rest = decoder.decode();
      if (rest) yield rest;
      return;
    }
    await sleep(pollMs, undefined, { signal }).catch(() => undefined);
  }
}

async function readRange(
  file: string,
  from: number,
  to: number,
  decoder: TextDecoder,
): Promise<{ text: string; bytes: number }> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(to - from);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, from);
    // A character cut at the chunk's end is held until its next bytes come.
    return { text: decoder.decode(buffer.subarray(0, bytesRead), { stream: true }), bytes: bytesRead };
  } finally {
    await handle.close();
  }
}
