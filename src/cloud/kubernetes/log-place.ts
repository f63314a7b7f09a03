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
  place: LogPlace,
  reachesStart: boolean,
): (LogPlace & { readonly at: number }) | 'lost' {
  const placer = new LogPlacer(place, reachesStart);
  for (const line of lines) if (placer.take(line)) break;
  return placer.end();
}

/**
 * placeInLog a line at a time, for a log read as it comes (log-follow.ts streams a pod's, which may be
 * 10 MiB): `take` each line in order until it says the place is found, then `end`; `end` after the last
 * line too. It holds no line, only counts: where it is, the bytes left, the newest second's run of lines.
 * Past a lost place it goes on counting, for `endAnchor` (where the log ends: a gap goes on from there).
 */
export class LogPlacer {
  /** Lines taken so far (the index of the next). */
  private at = 0;
  /** Finding the anchor's second, then its lines before the place, then the bytes past them. */
  private phase: 'second' | 'before' | 'bytes' | 'found' | 'lost';
  private linesLeft: number;
  private bytesLeft: number;
  /** The found place (phase 'found'). */
  private found: (LogPlace & { readonly at: number }) | undefined;
  /** The run of lines of one second the last line taken ends (undefined after an unstamped line). */
  private run: { second: number; count: number } | undefined;

  constructor(
    private readonly place: LogPlace,
    reachesStart: boolean,
  ) {
    this.linesLeft = place.anchor.linesBefore;
    this.bytesLeft = place.skip;
    if (place.anchor.second === undefined) this.phase = reachesStart ? 'bytes' : 'lost';
    else this.phase = 'second';
  }

  /** Takes the next line; true once the place is found (a lost one is read on, for `endAnchor`). */
  take(line: StampedLine): boolean {
    const second = this.place.anchor.second;
    if (this.phase === 'second' && line.stamp !== undefined && line.stamp.seconds >= second!) {
      // The anchor's second and the lines of it before the position must all still be there.
      this.phase = line.stamp.seconds !== second ? 'lost' : this.linesLeft > 0 ? 'before' : 'bytes';
    }
    if (this.phase === 'before') {
      if (line.stamp?.seconds !== second) this.phase = 'lost';
      else if (--this.linesLeft === 0) this.phase = 'bytes';
    } else if (this.phase === 'bytes') {
      const bytes = Buffer.byteLength(line.text) + 1;
      if (this.bytesLeft < bytes) {
        // An unstamped line gives no second to start from: the anchor given stays.
        const stamp = line.stamp;
        const before = stamp && this.run?.second === stamp.seconds ? this.run.count : 0;
        this.found = stamp
          ? { anchor: { second: stamp.seconds, linesBefore: before }, skip: this.bytesLeft, at: this.at }
          : { ...this.place, at: this.at };
        this.phase = 'found';
        return true;
      }
      this.bytesLeft -= bytes;
    }
    this.count(line);
    return false;
  }

  /** Where the log ends: past its last line taken (and counted), as endOf says. */
  endAnchor(): PodLogAnchor {
    if (this.at === 0) return { linesBefore: 0 };
    return this.run ? { second: this.run.second, linesBefore: this.run.count } : this.place.anchor;
  }

  /** The place, the log's lines taken to its end or until `take` said it was found. */
  end(): (LogPlace & { readonly at: number }) | 'lost' {
    if (this.found) return this.found;
    if (this.phase !== 'bytes' || this.bytesLeft > 0) return 'lost';
    // At its very end: the anchor past its last line.
    return { anchor: this.endAnchor(), skip: 0, at: this.at };
  }

  private count(line: StampedLine): void {
    this.at += 1;
    const stamp = line.stamp;
    if (!stamp) this.run = undefined;
    else if (this.run?.second === stamp.seconds) this.run.count += 1;
    else this.run = { second: stamp.seconds, count: 1 };
  }
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
