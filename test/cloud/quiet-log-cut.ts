/**
 * A log cut after its job has been quiet a minute. A cut right after a write says lines may be missing
 * (log-cap.ts: a job writing just before its cut may have landed a write in its last instant); tests
 * that append and then cut, with no job writing meanwhile, model the quiet job.
 */
import { utimesSync } from 'node:fs';
import { capLog, type LogCap } from '../../src/cloud/local/log-cap.ts';

/** Dates the log's last write a minute back. */
export function quiet(file: string): void {
  const minuteAgo = Date.now() / 1000 - 60;
  utimesSync(file, minuteAgo, minuteAgo);
}

/**
 * Dates the log's last write to the cut's instant, however late the cut runs: a few seconds ahead (CI's
 * load once put more than 50 ms between a test's write and its cut, which then read the job as quiet).
 */
export function writtenJustNow(file: string): void {
  const soon = Date.now() / 1000 + 10;
  utimesSync(file, soon, soon);
}

/** capLog of a log whose job has been quiet a minute. */
export function cutQuiet(file: string, cap: LogCap): Promise<boolean> {
  quiet(file);
  return capLog(file, cap);
}
