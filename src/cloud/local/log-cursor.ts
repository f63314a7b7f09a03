import { LOG_START, LogCursorError, type LogPosition } from '../../service/ports.ts';

/**
 * A local log's cursor: `h` and a byte of the log's history (log-history.ts: all it has had, each cut's
 * notice counted). One of digits alone was given by a boa from before 2026-12-01, a byte of the log
 * since its last cut, and is read so: after an upgrade a follow goes on where it was (found in review:
 * read as a byte of the history, it lay before the log's start, so a false gap line, then .log.1 again).
 */
export const cursorAt = (byte: number): LogPosition => ({ cursor: `h${byte}`, skip: 0 });

/**
 * The byte of the log's history a position names. `logFrom`: where the log as it is now begins, which a
 * generation shown from its start (LOG_START) and an old cursor count from.
 */
export function logByteOf({ cursor, skip }: LogPosition, logFrom = 0): number {
  if (cursor === LOG_START) return logFrom + skip;
  const [, history, byte] = /^(h?)(\d{1,15})$/.exec(cursor) ?? [];
  if (byte === undefined)
    throw new LogCursorError(cursor, `a local log's cursor is "${LOG_START}" or one it gave, e.g. h1024`);
  return (history ? 0 : logFrom) + Number(byte) + skip;
}
