import { statSync } from 'node:fs';
import { type LogCutRecord, readLogCut } from './log-cap.ts';

/**
 * A local log's places across its cuts (log-cap.ts), numbered as a follower gets them: every byte the
 * log has had since it began, each cut's notice included. A follower's cursor is such a byte, so one
 * that reconnects after a cut still names its place: in <rank>.log.1, or gone (a gap said). A byte of
 * the log alone was started again by each cut, and a follower reconnecting after one went on from that
 * byte of the new log, skipping what lay between without a gap line (found in review).
 */
export interface LogHistory {
  /** The cuts so far (the record's count). */
  readonly cuts: number;
  /** Where <rank>.log.1 begins, and how many bytes it holds. */
  readonly keptFrom: number;
  readonly keptBytes: number;
  /** Where the log as it is now begins (right after <rank>.log.1). */
  readonly logFrom: number;
}

/**
 * The log's history as its cut record says. A log never cut begins at 0; a record of a boa from before
 * these places (no `start`) is taken as the first cut, and one whose .1 is not complete yet (no `kept`:
 * the cut's notice not written) by the .1's size now.
 */
export function logHistory(file: string, record: LogCutRecord | undefined = readLogCut(file)): LogHistory {
  if (!record) return { cuts: 0, keptFrom: 0, keptBytes: 0, logFrom: 0 };
  const keptFrom = record.start ?? record.from;
  const keptBytes = record.kept ?? sizeOf(`${file}.1`);
  return { cuts: record.cuts, keptFrom, keptBytes, logFrom: keptFrom + keptBytes };
}

export function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0; // removed by hand, or never made
  }
}
