/**
 * A follower of a local log that reconnects after the log's cut (log-cap.ts): its cursor still names its
 * place, in <rank>.log.1 or gone (said with a gap line), never a byte of the new log (found in review:
 * it went on from that byte of the new log, what lay between skipped without a word).
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { cutQuiet } from './quiet-log-cut.ts';
import { CUT_GAP_LINE, FollowBreakOff, followLogFile } from '../../src/cloud/local/log-follow.ts';
import { logHistory } from '../../src/cloud/local/log-history.ts';
import type { LogPosition } from '../../src/service/ports.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function logFile(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'boa-follow-reconnect-'));
  dirs.push(dir);
  const file = join(dir, '0.log');
  writeFileSync(file, text);
  return file;
}

const lines = (from: number, to: number, tag = 'line') =>
  Array.from({ length: to - from }, (_, i) => `${tag} ${from + i}\n`).join('');

const cap = { capBytes: 100, keepBytes: 250, checkMs: 1 };
const options = { tailLines: 100, pollMs: 5, ended: () => true, signal: new AbortController().signal };

/** A follow of a replica that has ended: all it gives, and where it said its text starts. */
async function followed(file: string, from?: LogPosition) {
  const follow = followLogFile(file, { ...options, ...(from ? { from } : {}) })!;
  const got: Buffer[] = [];
  for await (const chunk of follow.chunks) got.push(Buffer.from(chunk));
  return { from: follow.from, gap: follow.gap, text: Buffer.concat(got).toString('utf8') };
}

/** The follower's next ask after it got `text` of a follow that started at `from`. */
const after = (from: LogPosition, text: string): LogPosition => ({
  cursor: from.cursor,
  skip: from.skip + Buffer.byteLength(text),
});

it('goes on in <log>.1 from its place after a cut, then the new log: nothing lost, nothing twice', async () => {
  const file = logFile(lines(0, 10));
  const first = await followed(file);
  expect(first.text).toBe(lines(0, 10));
  // Cut off there; meanwhile the job writes on, the log is cut, and the new log grows past that byte.
  appendFileSync(file, lines(10, 20));
  expect(await cutQuiet(file, cap)).toBe(true);
  const notice = readFileSync(`${file}.1`, 'utf8').split('\n').at(-2)!;
  expect(notice).toMatch(/^boa: this log passed /);
  appendFileSync(file, lines(0, 30, 'new'));
  const again = await followed(file, after(first.from, first.text));
  expect(again.gap).toBeUndefined();
  expect(again.text).toBe(`${lines(10, 20)}${notice}\n${lines(0, 30, 'new')}`);

  // Cut off again part way through 0.log.1, then through the new log: each time the rest, exactly.
  const part = again.text.slice(0, 40);
  const third = await followed(file, after(again.from, part));
  expect(part + third.text).toBe(again.text);
  const most = again.text.slice(0, again.text.length - 12);
  const fourth = await followed(file, after(again.from, most));
  expect(fourth.text).toBe(again.text.slice(most.length));
});

it('goes on from its place after a cut its follow had read across, and says a gap when the cut log is gone', async () => {
  const file = logFile(lines(0, 10));
  const first = await followed(file);
  appendFileSync(file, lines(10, 20));
  await cutQuiet(file, cap);
  appendFileSync(file, lines(0, 5, 'new'));
  // The follower read across the cut into the new log, then was cut off.
  const across = await followed(file, after(first.from, first.text));
  expect(across.text).toMatch(/new 4\n$/);
  appendFileSync(file, lines(5, 10, 'new'));
  const on = await followed(file, after(across.from, across.text));
  expect(on.text).toBe(lines(5, 10, 'new'));

  // Cut twice since its place: what lay between is gone, and said; then all that is kept.
  appendFileSync(file, lines(10, 40, 'lost'));
  await cutQuiet(file, cap);
  appendFileSync(file, lines(0, 30, 'kept'));
  await cutQuiet(file, cap);
  appendFileSync(file, 'latest\n');
  const gone = await followed(file, after(on.from, on.text));
  const kept = readFileSync(`${file}.1`, 'utf8');
  expect(gone.text).toBe(`${CUT_GAP_LINE}${kept}latest\n`);
  expect(kept).not.toMatch(/lost 10\n/);
  // Cut off after the gap line and some of what is kept: its cursor counts the line, the rest follows.
  const seen = gone.text.slice(0, CUT_GAP_LINE.length + 30);
  const rest = await followed(file, after(gone.from, seen));
  expect(seen + rest.text).toBe(gone.text);
});

it('counts a live follow across a cut as a reconnect does: cut off after it, it goes on where it was', async () => {
  const file = logFile(lines(0, 10));
  let ended = false;
  const live = followLogFile(file, { ...options, ended: () => ended })!;
  const iterator = live.chunks[Symbol.asyncIterator]();
  const got: Buffer[] = [Buffer.from((await iterator.next()).value as Buffer)];
  appendFileSync(file, lines(10, 20));
  await cutQuiet(file, cap);
  appendFileSync(file, lines(0, 3, 'new'));
  // Read across the cut (the rest of 0.log.1, its notice, the new log), then cut off.
  while (!Buffer.concat(got).toString().endsWith('new 2\n'))
    got.push(Buffer.from((await iterator.next()).value as Buffer));
  ended = true;
  await iterator.return?.(undefined);
  const seen = Buffer.concat(got).toString();
  expect(seen).toMatch(/line 19\nboa: this log passed [^\n]*\nnew 0\n/);
  appendFileSync(file, lines(3, 6, 'new'));
  const on = await followed(file, after(live.from, seen));
  expect(on.text).toBe(lines(3, 6, 'new'));
});

it('breaks off a live follow whose unread bytes a cut dropped: asked again, its cursor after the gap line is the true place', async () => {
  const file = logFile(lines(0, 10));
  let ended = false;
  const live = followLogFile(file, { ...options, ended: () => ended })!;
  const iterator = live.chunks[Symbol.asyncIterator]();
  const seen = Buffer.from((await iterator.next()).value as Buffer).toString();
  // 80 bytes written, not read; the cut keeps the last 50 of them: the follower's next 30 are gone.
  appendFileSync(file, lines(10, 20));
  await cutQuiet(file, { ...cap, keepBytes: 50 });
  appendFileSync(file, lines(0, 3, 'new'));
  await expect(iterator.next()).rejects.toThrow(FollowBreakOff);
  // Asked again from where it got to: the gap line, what 0.log.1 keeps, the new log.
  ended = true;
  const again = await followed(file, after(live.from, seen));
  expect(again.text).toBe(`${CUT_GAP_LINE}${readFileSync(`${file}.1`, 'utf8')}${lines(0, 3, 'new')}`);
  // Cut off after `new 2`, then part way through 0.log.1 and the new log: each time the rest, exactly.
  appendFileSync(file, lines(3, 30, 'new'));
  expect((await followed(file, after(again.from, again.text))).text).toBe(lines(3, 30, 'new'));
  for (const part of [CUT_GAP_LINE.length + 12, again.text.length - 3]) {
    const rest = await followed(file, after(again.from, again.text.slice(0, part)));
    expect(again.text.slice(0, part) + rest.text).toBe(again.text + lines(3, 30, 'new'));
  }
});

it('reads a cursor a boa from before 2026-12-01 gave (digits: a byte of the log since its cut) as it did', async () => {
  const file = logFile(lines(0, 20));
  await cutQuiet(file, { ...cap, keepBytes: 50 });
  appendFileSync(file, lines(0, 10, 'new'));
  // Its follower had got `new 0` to `new 4` (byte 30 of the log since the cut), then boa was upgraded.
  const old = await followed(file, { cursor: '0', skip: 30 });
  expect(old).toMatchObject({ gap: undefined, text: lines(5, 10, 'new') });
  // The cursor it is given now names the same place: asked again from it, the same rest.
  expect(old.from.cursor).toMatch(/^h\d+$/);
  expect((await followed(file, old.from)).text).toBe(old.text);
  // As the cut record of a boa from before then says it too (no start, no kept).
  const { cuts, size, from } = JSON.parse(readFileSync(`${file}.cut`, 'utf8')) as Record<string, number>;
  writeFileSync(`${file}.cut`, JSON.stringify({ cuts, size, from }));
  expect((await followed(file, { cursor: '0', skip: 30 })).text).toBe(lines(5, 10, 'new'));
});

it('reads the <log>.1 it began in to its end though a cut replaces it meanwhile, then breaks off', async () => {
  const KiB = 1024;
  const file = logFile(lines(0, 30_000, 'old'));
  const big = { capBytes: 100 * KiB, keepBytes: 200 * KiB, checkMs: 1 };
  await cutQuiet(file, big);
  const kept = readFileSync(`${file}.1`);
  // A follower whose place is where 0.log.1 begins reads its first chunk (64 KiB of it)...
  const follow = followLogFile(file, {
    ...options,
    from: { cursor: `h${logHistory(file).keptFrom}`, skip: 0 },
  })!;
  const iterator = follow.chunks[Symbol.asyncIterator]();
  const got: Buffer[] = [Buffer.from((await iterator.next()).value as Buffer)];
  expect(got[0]!.length).toBeLessThan(kept.length);
  // ...then the log is cut again: another 0.log.1 takes the name.
  appendFileSync(file, lines(0, 30_000, 'next'));
  await cutQuiet(file, big);
  const broken = await (async () => {
    for (let next = await iterator.next(); !next.done; next = await iterator.next())
      got.push(Buffer.from(next.value));
  })().then(
    () => undefined,
    (error: unknown) => error,
  );
  // The rest is of the one it began in, not spliced with the next; where that ends, the log it was
  // followed by is cut away (its first 100 KiB): asked again, the follower gets the gap line.
  expect(Buffer.concat(got).equals(kept)).toBe(true);
  expect(broken).toBeInstanceOf(FollowBreakOff);
});
