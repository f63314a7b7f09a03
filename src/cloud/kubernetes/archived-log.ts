import type { LogPosition } from '../../service/ports.ts';
import { formatCursor } from './log-cursor.ts';
import type { PodLogStart } from './log-follow.ts';
import { anchorAt, endOf, placeInLog } from './log-place.ts';
import { parseLine } from './log-stamps.ts';

/**
 * The first line of a kept log that lacks its beginning (log-archive.ts keeps a pod's last lines): not
 * the pod's, never shown, and it says a follower's position from the log's start cannot be found in it.
 */
export const NOT_WHOLE = 'boa: the lines before this one were not kept';

/**
 * Reading a kept pod log (log-archive.ts: the kubelet's stamped lines) as the API server's answers
 * would read: its last lines, or from a follower's position, the text without stamps.
 */
function linesOf(stamped: string) {
  const lines = stamped.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const whole = lines[0] !== NOT_WHOLE;
  return { lines: (whole ? lines : lines.slice(1)).map(parseLine), whole };
}

const textOf = (lines: readonly { text: string }[]) => lines.map((line) => `${line.text}\n`).join('');

/** Its last `tailLines` lines. */
export function archivedTail(stamped: string, tailLines: number): string {
  return textOf(linesOf(stamped).lines.slice(-tailLines));
}

/**
 * What a follow of the pod would have given from `start`, the log being complete: its last lines, or
 * the text from a follower's position; `gap` when the kept log no longer holds that position (the
 * follower is answered with nothing more, at the log's end).
 */
export function archivedFrom(
  stamped: string,
  start: PodLogStart,
): { text: string; from: LogPosition; gap?: true } {
  const { lines, whole } = linesOf(stamped);
  if ('tailLines' in start) {
    const at = Math.max(0, lines.length - start.tailLines);
    const text = textOf(lines.slice(at));
    // At its first line's second; a log kept without stamps has only its start to count from.
    const near = anchorAt(lines, at);
    if (near) return { text, from: { cursor: formatCursor(near), skip: 0 } };
    const before = Buffer.byteLength(textOf(lines.slice(0, at)));
    return { text, from: { cursor: formatCursor({ linesBefore: 0 }), skip: before } };
  }
  const place = placeInLog(lines, start, whole);
  if (place === 'lost')
    return { text: '', from: { cursor: formatCursor(endOf(lines, start.anchor)), skip: 0 }, gap: true };
  const text = Buffer.from(textOf(lines.slice(place.at)))
    .subarray(place.skip)
    .toString();
  return { text, from: { cursor: formatCursor(place.anchor), skip: place.skip } };
}
