/**
 * Finding a follower's place in a pod log (log-place.ts, archived-log.ts): an anchor (a second and the
 * lines of it before) and the bytes it got past it. Answered from the line it got to, the same place;
 * a place the log no longer reaches (rotated away, kept without its beginning) is lost, never guessed.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { archivedFrom, NOT_WHOLE } from '../../src/cloud/kubernetes/archived-log.ts';
import { formatCursor } from '../../src/cloud/kubernetes/log-cursor.ts';
import { placeInLog } from '../../src/cloud/kubernetes/log-place.ts';
import { secondAsTime } from '../../src/cloud/kubernetes/log-stamps.ts';

const BASE = 1_796_000_000;
/** Lines stamped in the seconds given (many may share one), each with its text. */
const logOf = (seconds: number[]) =>
  seconds.map((s, i) => ({ stamp: { seconds: BASE + s, nanos: i }, text: `line ${i}` }));
const textFrom = (lines: { text: string }[], at: number, skip: number) =>
  Buffer.from(
    lines
      .slice(at)
      .map((l) => `${l.text}\n`)
      .join(''),
  )
    .subarray(skip)
    .toString();
/** A kept log's file: each line with its stamp. */
const stampedFile = (lines: ReturnType<typeof logOf>) =>
  lines
    .map(
      (l) =>
        `${secondAsTime(l.stamp.seconds).replace('Z', `.${String(l.stamp.nanos).padStart(9, '0')}Z`)} ${l.text}\n`,
    )
    .join('');

describe("a follower's place in a pod log", () => {
  it('is found again from the line it got to: the same text follows', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 30 }),
        fc.nat(),
        fc.nat(),
        (steps, pick, extra) => {
          const seconds: number[] = [];
          steps.forEach((step, i) => seconds.push((seconds[i - 1] ?? 0) + step));
          const lines = logOf(seconds);
          // An anchor as a tail gives it: a line's second and the lines of that second before it.
          const p = pick % lines.length;
          const second = lines[p]!.stamp.seconds;
          const first = lines.findIndex((l) => l.stamp.seconds === second);
          const anchor = { second, linesBefore: p - first };
          const total = Buffer.byteLength(textFrom(lines, p, 0));
          const skip = extra % (total + 1);
          const fromSecond = lines.slice(first);
          const place = placeInLog(fromSecond, { anchor, skip }, true);
          expect(place).not.toBe('lost');
          if (place === 'lost') return;
          expect(textFrom(fromSecond, place.at, place.skip)).toBe(textFrom(lines, p, skip));
          // The new anchor names the same place, read from its own second.
          const again = lines.findIndex((l) => l.stamp.seconds === place.anchor.second);
          const replaced = placeInLog(lines.slice(again), { anchor: place.anchor, skip: place.skip }, true);
          expect(replaced).not.toBe('lost');
          if (replaced === 'lost') return;
          expect(textFrom(lines.slice(again), replaced.at, replaced.skip)).toBe(textFrom(lines, p, skip));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('is lost when the log no longer reaches it, instead of skipping what came after', () => {
    const lines = logOf([0, 0, 1, 5, 5, 9]);
    const anchor = { second: BASE, linesBefore: 1 };
    // The kubelet rotated: the newest file starts at second 5.
    expect(placeInLog(lines.slice(3), { anchor, skip: 0 }, true)).toBe('lost');
    // Fewer lines of the anchor's second than came before the place.
    expect(placeInLog(lines.slice(1), { anchor: { second: BASE, linesBefore: 2 }, skip: 0 }, true)).toBe(
      'lost',
    );
    // More bytes than the log holds since.
    expect(placeInLog(lines, { anchor, skip: 1000 }, true)).toBe('lost');
    // From the start, in a log without its beginning.
    expect(placeInLog(lines, { anchor: { linesBefore: 0 }, skip: 3 }, false)).toBe('lost');
    // At its very end: the anchor past its last line.
    const all = Buffer.byteLength(textFrom(lines, 1, 0));
    expect(placeInLog(lines, { anchor, skip: all }, true)).toEqual({
      anchor: { second: BASE + 9, linesBefore: 1 },
      skip: 0,
      at: lines.length,
    });
  });

  it('in a kept log: found by its second; from the start only when the log kept its beginning', () => {
    const lines = logOf([...Array.from({ length: 30 }, (_, i) => i)]);
    const kept = lines.slice(15);
    const file = `${NOT_WHOLE}\n${stampedFile(kept)}`;
    // The follower had lines 0-18 from the start: the kept log cannot say where that is.
    const had = Buffer.byteLength(textFrom(lines, 0, 0)) - Buffer.byteLength(textFrom(lines, 19, 0));
    const lost = archivedFrom(file, { anchor: { linesBefore: 0 }, skip: had });
    expect(lost.gap).toBe(true);
    expect(lost.text).toBe('');
    // From line 17's second and 2 lines past it: lines 19 on, the marker never shown.
    const byLine = Buffer.byteLength('line 17\nline 18\n');
    const found = archivedFrom(file, { anchor: { second: BASE + 17, linesBefore: 0 }, skip: byLine });
    expect(found.gap).toBeUndefined();
    expect(found.text).toBe(textFrom(lines, 19, 0));
    expect(found.from).toEqual({ cursor: formatCursor({ second: BASE + 19, linesBefore: 0 }), skip: 0 });
    expect(archivedFrom(file, { tailLines: 100 }).text).toBe(textFrom(kept, 0, 0));
    // Kept whole: from the start as asked.
    const whole = archivedFrom(stampedFile(lines), { anchor: { linesBefore: 0 }, skip: had });
    expect(whole.text).toBe(textFrom(lines, 19, 0));
  });
});
