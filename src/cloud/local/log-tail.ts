import { readLogTailBytes } from './executor-records.ts';
import { readLogCut } from './log-cap.ts';

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
