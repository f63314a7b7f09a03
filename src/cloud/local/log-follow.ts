import { TextDecoder } from 'node:util';
import { open, stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { readLogTailWithSize } from './executor-records.ts';

/** A read of what a log gained: at most this much at once, so one chunk never holds a MiB of a burst. */
const CHUNK_BYTES = 64 * 1024;

export interface FollowOptions {
  readonly tailLines: number;
  /** Start at this byte of the log instead of its last tailLines lines (past its end: it was cut). */
  readonly offset?: number;
  /** How often the file is checked for more (a file watch misses writes on some mounts; a poll does not). */
  readonly pollMs: number;
  /** True once the replica writes no more: its process ended, or it is not one this executor runs. */
  readonly ended: () => boolean;
  readonly signal: AbortSignal;
}

/**
 * `tail -f` of a local replica's log: its last lines (or from a byte offset), then what it writes, with
 * the byte its text starts at (a follower's cursor), until it has ended and all it
 * wrote is read. A log cut by its cap (log-cap.ts: copytruncate) is seen shorter than what was read,
 * and read again from its beginning (unless the job wrote past that point within one poll: 64 MiB).
 * Undefined when the log does not exist.
 */
export function followLogFile(
  file: string,
  options: FollowOptions,
): { start: number; chunks: AsyncGenerator<string> } | undefined {
  const first = readLogTailWithSize(file, options.tailLines);
  if (!first) return undefined;
  // From a byte a follower reached before (its connection broke): on from there, nothing twice.
  if (options.offset !== undefined) {
    return { start: options.offset, chunks: follow(file, { text: '', size: options.offset }, options) };
  }
  return { start: first.size - Buffer.byteLength(first.text), chunks: follow(file, first, options) };
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
