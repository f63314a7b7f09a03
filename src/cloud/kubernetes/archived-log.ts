import type { LogPosition } from '../../service/ports.ts';
import { formatCursor } from './log-cursor.ts';
import type { PodLogStart } from './log-follow.ts';
import { parseLine } from './log-stamps.ts';

/**
 * Reading a kept pod log (log-archive.ts: the kubelet's stamped lines) as the API server's answers
 * would read: its last lines, or from a follower's position, the text without stamps.
 */
function linesOf(stamped: string) {
  const lines = stamped.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines.map(parseLine);
}

const textOf = (lines: readonly { text: string }[]) => lines.map((line) => `${line.text}\n`).join('');

/** Its last `tailLines` lines. */
export function archivedTail(stamped: string, tailLines: number): string {
  return textOf(linesOf(stamped).slice(-tailLines));
}

/**
 * What a follow of the pod would have given from `start`, the log being complete: its last lines (at
 * the log's start plus the bytes before them), or the text from a cursor's second, its lines before, and
 * the bytes a follower had.
 */
export function archivedFrom(stamped: string, start: PodLogStart): { text: string; from: LogPosition } {
  const lines = linesOf(stamped);
  if ('tailLines' in start) {
    const tail = lines.slice(-start.tailLines);
    const before = Buffer.byteLength(textOf(lines.slice(0, lines.length - tail.length)));
    return { text: textOf(tail), from: { cursor: formatCursor({ linesBefore: 0 }), skip: before } };
  }
  const { anchor, skip } = start;
  const second = anchor.second;
  const first = second === undefined ? 0 : lines.findIndex((l) => l.stamp && l.stamp.seconds >= second);
  const after = first < 0 ? [] : lines.slice(first + anchor.linesBefore);
  const text = Buffer.from(textOf(after)).subarray(skip).toString();
  return { text, from: { cursor: formatCursor(anchor), skip } };
}
