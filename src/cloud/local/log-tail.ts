import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { readLogCut } from './log-cap.ts';

/** A log's read from its end: a long run's log is not read whole for its last lines. */
const LOG_TAIL_BYTES = 1 << 20;

/** The last `lines` lines of a log file (at most its last MiB); undefined when there is no such file. */
export function readLogTail(file: string, lines: number): string | undefined {
  return readLogTailBytes(file, lines)?.bytes.toString('utf8');
}

/**
 * readLogTail's bytes as the file holds them, and the file's size when read: where a follower reads on
 * from. Lines are found by their newline bytes, never by decoding: a log that is not UTF-8 (a Latin-1
 * tool, binary output) or a read cutting a character in two must not move where its text starts.
 */
export function readLogTailBytes(file: string, lines: number): { bytes: Buffer; size: number } | undefined {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const size = fstatSync(fd).size;
    const length = Math.min(size, LOG_TAIL_BYTES);
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    // A cut at the MiB mark leaves a partial first line: dropped unless the whole file was read, or it
    // is all there is (progress bars redrawn with \r write one long line).
    const newline = buffer.indexOf(0x0a);
    const first = length < size && newline !== -1 && newline < length - 1 ? newline + 1 : 0;
    let from = lines === 0 ? length : first;
    // Back from the end, over `lines` newlines (the last byte's own newline ends the last line).
    for (let i = length - 2, seen = 0; lines > 0 && i >= first; i--)
      if (buffer[i] === 0x0a && ++seen === lines) {
        from = i + 1;
        break;
      }
    return { bytes: buffer.subarray(from), size };
  } finally {
    closeSync(fd);
  }
}

/**
 * The last `lines` lines of a replica's log, across its last cut: a log cut by its cap (log-cap.ts)
 * holds only what came after, so the lines before are taken from the end of <rank>.log.1 (which ends
 * with the cut's notice). Read from the log alone, a job that crashed just after a cut showed only the
 * notice, its traceback in <rank>.log.1 (found in a trial). Undefined when the log does not exist.
 */
export function readLogTailAcrossCut(file: string, lines: number): string | undefined {
  // Read again if a cut came between the two reads: the lines would be doubled or missed.
  for (let attempt = 0; ; attempt++) {
    const cuts = readLogCut(file)?.cuts;
    const text = readBoth(file, lines);
    if (readLogCut(file)?.cuts === cuts || attempt === 2) return text;
  }
}

function readBoth(file: string, lines: number): string | undefined {
  const now = readLogTailBytes(file, lines);
  if (!now) return undefined;
  // The lines asked for are all in the log, or it is longer than a read takes (what was read is its end).
  const have = lineCount(now.bytes);
  if (now.bytes.length < now.size || have >= lines) return now.bytes.toString('utf8');
  const before = readLogTailBytes(`${file}.1`, lines - have);
  return Buffer.concat([before?.bytes ?? Buffer.alloc(0), now.bytes]).toString('utf8');
}

/** Lines in `bytes`: its newlines, and a last line not ended yet. */
function lineCount(bytes: Buffer): number {
  let count = 0;
  for (const byte of bytes) if (byte === 0x0a) count++;
  return bytes.length > 0 && bytes[bytes.length - 1] !== 0x0a ? count + 1 : count;
}
