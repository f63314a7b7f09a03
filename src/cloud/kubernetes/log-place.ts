import type { PodLogAnchor, StampedLine } from './log-cursor.ts';

/** A position found in a log: an anchor near it and the bytes past the anchor. */
export interface LogPlace {
  readonly anchor: PodLogAnchor;
  readonly skip: number;
}

/**
 * Finds a follower's position (an anchor and the bytes it got past it) in a log's stamped lines: the
 * anchor's second read from its start (or the whole log for `start`). Answered with an anchor at the
 * line the follower got to, so the log is read again from there instead of from where a long follow
 * began. 'lost' when the log no longer reaches the position: the kubelet rotated away the anchor's
 * second, or the follower had more bytes than the log holds since (a log kept without its beginning).
 */
export function placeInLog(
  lines: readonly StampedLine[],
  { anchor, skip }: LogPlace,
  reachesStart: boolean,
): (LogPlace & { readonly at: number }) | 'lost' {
  let at = 0;
  const second = anchor.second;
  if (second === undefined) {
    if (!reachesStart) return 'lost';
  } else {
    at = lines.findIndex((line) => line.stamp !== undefined && line.stamp.seconds >= second);
    // The anchor's second and the lines of it before the position must all still be there.
    if (at < 0 || lines[at]!.stamp!.seconds !== second) return 'lost';
    for (let i = 0; i < anchor.linesBefore; i++, at++) {
      if (lines[at]?.stamp?.seconds !== second) return 'lost';
    }
  }
  let left = skip;
  while (at < lines.length) {
    const bytes = Buffer.byteLength(lines[at]!.text) + 1;
    if (left < bytes) break;
    left -= bytes;
    at += 1;
  }
  if (at === lines.length) return left > 0 ? 'lost' : { anchor: endOf(lines, anchor), skip: 0, at };
  // An unstamped line gives no second to start from: the anchor given stays.
  const near = anchorAt(lines, at);
  return near ? { anchor: near, skip: left, at } : { anchor, skip, at };
}

/** The anchor of the line at `at`: its second and the lines of it before; undefined when unstamped. */
export function anchorAt(lines: readonly StampedLine[], at: number): PodLogAnchor | undefined {
  const stamp = lines[at]?.stamp;
  if (!stamp) return undefined;
  let before = 0;
  while (at - before - 1 >= 0 && lines[at - before - 1]!.stamp?.seconds === stamp.seconds) before += 1;
  return { second: stamp.seconds, linesBefore: before };
}

/** The anchor just past a log's last line: its second and all the lines of it read (more come after). */
export function endOf(lines: readonly StampedLine[], otherwise: PodLogAnchor): PodLogAnchor {
  const last = lines.at(-1)?.stamp;
  if (!last) return lines.length === 0 ? { linesBefore: 0 } : otherwise;
  let count = 0;
  for (let i = lines.length - 1; i >= 0 && lines[i]!.stamp?.seconds === last.seconds; i--) count += 1;
  return { second: last.seconds, linesBefore: count };
}
