/** Following a local replica's log (src/cloud/local/log-follow.ts): `tail -f` with the log's cap and a stop. */
import { appendFileSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { cutQuiet } from './quiet-log-cut.ts';
import { FollowBreakOff, followLogFile, HAND_CUT_LINE } from '../../src/cloud/local/log-follow.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function logFile(text: string | Buffer): string {
  const dir = mkdtempSync(join(tmpdir(), 'boa-follow-'));
  dirs.push(dir);
  const file = join(dir, '0.log');
  writeFileSync(file, text);
  return file;
}

/** Collects what the follower yields while `act` runs against it, until it ends. */
async function collect(chunks: AsyncIterable<Buffer>, act: (seen: () => string) => Promise<void>) {
  const got: Buffer[] = [];
  const seen = () => Buffer.concat(got).toString('utf8');
  const reading = (async () => {
    for await (const chunk of chunks) got.push(Buffer.from(chunk));
  })();
  await act(seen);
  await reading;
  return seen();
}

const until = async (ok: () => boolean) => {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(ok()).toBe(true);
};

it('gives the last lines, then what is written, then ends once the replica has ended and all is read', async () => {
  const file = logFile('a\nb\nc\n');
  let ended = false;
  const chunks = followLogFile(file, {
    tailLines: 2,
    pollMs: 5,
    ended: () => ended,
    signal: new AbortController().signal,
  })!.chunks;
  const seen = await collect(chunks, async (seen) => {
    await until(() => seen() === 'b\nc\n');
    appendFileSync(file, 'd\n');
    await until(() => seen() === 'b\nc\nd\n');
    // Written just before the end: still shown.
    appendFileSync(file, 'e\n');
    ended = true;
  });
  expect(seen).toBe('b\nc\nd\ne\n');
});

it('says a log cut without a record (by hand) where it follows, and reads on from its beginning', async () => {
  // Found in review: broken off there instead, a log written again past the follower's place before it
  // asked again was read on from that place, its first new lines lost with no gap said.
  const file = logFile('old line 1\nold line 2\n');
  let ended = false;
  const options = { tailLines: 10, pollMs: 5, ended: () => ended, signal: new AbortController().signal };
  const first = followLogFile(file, options)!;
  const seen = await collect(first.chunks, async (seen) => {
    await until(() => seen() === 'old line 1\nold line 2\n');
    truncateSync(file, 0); // not log-cap.ts's cut: nothing says what was past the follower's place
    await until(() => seen().endsWith(HAND_CUT_LINE));
    // Written past the follower's place before it could ask again.
    appendFileSync(file, 'new line A\nnew line B\nnew line C\n');
    await until(() => seen().endsWith('new line C\n'));
    // A character split across reads is kept whole.
    const euro = Buffer.from('€\n');
    appendFileSync(file, euro.subarray(0, 1));
    await new Promise((r) => setTimeout(r, 30));
    appendFileSync(file, euro.subarray(1));
    ended = true;
  });
  expect(seen).toBe(`old line 1\nold line 2\n${HAND_CUT_LINE}new line A\nnew line B\nnew line C\n€\n`);
});

/** The follow's chunks, pulled one at a time: between two pulls the follower reads nothing. */
function pulled(file: string, ended: () => boolean) {
  const follow = followLogFile(file, {
    tailLines: 100,
    pollMs: 5,
    ended,
    signal: new AbortController().signal,
  })!;
  const iterator = follow.chunks[Symbol.asyncIterator]();
  return {
    from: follow.from,
    next: async () => Buffer.from((await iterator.next()).value as Buffer),
    rest: async () => {
      const got: Buffer[] = [];
      for (let next = await iterator.next(); !next.done; next = await iterator.next())
        got.push(Buffer.from(next.value));
      return Buffer.concat(got).toString('utf8');
    },
  };
}

const lines = (from: number, to: number, tag = 'line') =>
  Array.from({ length: to - from }, (_, i) => `${tag} ${from + i}\n`).join('');

it('reads on in <log>.1 from its place when the cap cuts the log, before the log from its beginning', async () => {
  const file = logFile(lines(0, 10));
  let ended = false;
  const follow = pulled(file, () => ended);
  expect((await follow.next()).toString()).toBe(lines(0, 10));
  // Written, not yet read, then cut: those lines are only in 0.log.1 now.
  appendFileSync(file, lines(10, 30));
  expect(await cutQuiet(file, { capBytes: 100, keepBytes: 250, checkMs: 1 })).toBe(true);
  // The cut's notice closes 0.log.1, on a line of its own; the log starts again empty.
  const notice = /boa: this log passed [^\n]* was cut here[^\n]*\n$/.exec(
    readFileSync(`${file}.1`, 'utf8'),
  )?.[0];
  expect(notice).toBeDefined();
  expect(readFileSync(file, 'utf8')).toBe('');
  appendFileSync(file, 'after the cut\n');
  ended = true;
  expect(await follow.rest()).toBe(`${lines(10, 30)}${notice}after the cut\n`);
});

it('breaks off where what the follower had not read is gone: cut twice, or kept less of', async () => {
  const cap = { capBytes: 100, keepBytes: 250, checkMs: 1 };
  const file = logFile(lines(0, 10));
  const twice = pulled(file, () => false);
  await twice.next();
  appendFileSync(file, lines(10, 30, 'lost'));
  await cutQuiet(file, cap);
  appendFileSync(file, lines(0, 20, 'kept'));
  expect(await cutQuiet(file, cap)).toBe(true);
  // Asked again from there, it gets the gap line and what is kept (local-log-follow-reconnect.test.ts).
  await expect(twice.rest()).rejects.toThrow(FollowBreakOff);

  // Once, but further behind than 0.log.1 keeps.
  const behind = logFile('start\n');
  const lagging = pulled(behind, () => false);
  await lagging.next();
  appendFileSync(behind, lines(0, 100));
  await cutQuiet(behind, cap);
  await expect(lagging.rest()).rejects.toThrow(FollowBreakOff);
});

it('ends when its signal aborts, though the replica runs on; none for a log that does not exist', async () => {
  const file = logFile('x\n');
  const stop = new AbortController();
  const chunks = followLogFile(file, {
    tailLines: 5,
    pollMs: 5,
    ended: () => false,
    signal: stop.signal,
  })!.chunks;
  const seen = await collect(chunks, async (seen) => {
    await until(() => seen() === 'x\n');
    stop.abort();
  });
  expect(seen).toBe('x\n');
  const options = { tailLines: 5, pollMs: 5, ended: () => true, signal: stop.signal };
  expect(followLogFile(join(file, '..', 'missing.log'), options)).toBeUndefined();
});

it('says the byte its text starts at, and starts from a position given (a follower cut off goes on from there)', async () => {
  const file = logFile('a\nb\nc\n');
  const options = { pollMs: 5, ended: () => true, signal: new AbortController().signal };
  const tail = followLogFile(file, { ...options, tailLines: 2 })!;
  expect(tail.from).toEqual({ cursor: 'h2', skip: 0 });
  expect(await collect(tail.chunks, async () => undefined)).toBe('b\nc\n');
  // The cursor it was given and the bytes it got: the rest, nothing twice.
  const from = followLogFile(file, { ...options, tailLines: 2, from: { cursor: 'h2', skip: 2 } })!;
  expect(from.from).toEqual({ cursor: 'h4', skip: 0 });
  expect(await collect(from.chunks, async () => undefined)).toBe('c\n');
  const start = followLogFile(file, { ...options, tailLines: 1, from: { cursor: 'start', skip: 1 } })!;
  expect(await collect(start.chunks, async () => undefined)).toBe('\nb\nc\n');
  // Past its end: the log was cut (its cap) since, so it is read from its beginning, said as a gap
  // (what was between the follower's place and the cut is not in it).
  const cut = followLogFile(file, { ...options, tailLines: 2, from: { cursor: 'h100', skip: 0 } })!;
  expect(cut.gap).toBe(true);
  expect(cut.from).toEqual({ cursor: 'h0', skip: 0 });
  expect(await collect(cut.chunks, async () => undefined)).toBe('a\nb\nc\n');
  expect(from.gap).toBeUndefined();
});

it('counts its place in bytes of the file, a log that is not UTF-8 too: a follower goes on where it got to', async () => {
  // "café" in Latin-1: a lone 0xe9, not UTF-8 (decoded, each becomes a 3-byte U+FFFD).
  const latin1 = (i: number) =>
    Buffer.concat([Buffer.from('caf'), Buffer.from([0xe9]), Buffer.from(` ${i}\n`)]);
  const all = Buffer.concat(Array.from({ length: 20 }, (_, i) => latin1(i)));
  const file = logFile(all);
  const options = { pollMs: 5, ended: () => true, signal: new AbortController().signal, tailLines: 100 };
  const whole = followLogFile(file, options)!;
  expect(whole.from).toEqual({ cursor: 'h0', skip: 0 });
  const got: Buffer[] = [];
  for await (const chunk of whole.chunks) got.push(Buffer.from(chunk));
  expect(Buffer.concat(got).equals(all)).toBe(true);
  // Cut off after 5 lines: asked again from the cursor and the bytes it got, the 6th line comes whole.
  const five = Buffer.concat(Array.from({ length: 5 }, (_, i) => latin1(i))).length;
  const on = followLogFile(file, { ...options, from: { cursor: whole.from.cursor, skip: five } })!;
  const rest: Buffer[] = [];
  for await (const chunk of on.chunks) rest.push(Buffer.from(chunk));
  expect(Buffer.concat(rest).equals(all.subarray(five))).toBe(true);
  // Its last lines: the byte they start at is the file's.
  const tail = followLogFile(file, { ...options, tailLines: 2 })!;
  expect(tail.from).toEqual({
    cursor: 'h' + String(all.length - latin1(18).length - latin1(19).length),
    skip: 0,
  });
});

it('refuses a cursor it did not give, saying what one looks like', () => {
  const file = logFile('a\n');
  const options = { pollMs: 5, ended: () => true, signal: new AbortController().signal, tailLines: 1 };
  for (const cursor of ['2026-11-30T11:08:23Z/0', '-1', '1e3', '', 'h', 'h-1', 'x5'])
    expect(() => followLogFile(file, { ...options, from: { cursor, skip: 0 } })).toThrow(
      /is not a place in this executor's logs: a local log's cursor is "start" or one it gave, e.g. h1024/,
    );
});

// Found in review: a slow reader (the HTTP socket's back-pressure) pauses the follow between two chunks
// of one read; a cut then, and the job writing on past the reader's place, read the new log's bytes as
// the old log's: old lines lost, new ones spliced in and repeated, no notice.
it('a cut between two chunks of one read: the old log, the notice, then the new log, each once', async () => {
  const lines = (tag: string, n: number) =>
    Array.from({ length: n }, (_, i) => `${tag} ${String(i).padStart(6, '0')}\n`).join('');
  const old = lines('old', 20_000); // 220 kB: four 64 KiB chunks
  const file = logFile(old);
  let ended = false;
  const followed = followLogFile(file, {
    tailLines: 10,
    from: { cursor: 'start', skip: 0 },
    pollMs: 5,
    ended: () => ended,
    signal: new AbortController().signal,
  });
  const iterator = (followed?.chunks as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  const got = [Buffer.from((await iterator.next()).value as Buffer)];
  // While the reader holds its first chunk: cut (its place still kept in 0.log.1), then 220 kB more.
  expect(await cutQuiet(file, { capBytes: 200_000, keepBytes: 200_000, checkMs: 1000 })).toBe(true);
  const notice = readFileSync(`${file}.1`, 'utf8').slice(200_000);
  const fresh = lines('new', 20_000);
  appendFileSync(file, fresh);
  ended = true;
  for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
    got.push(Buffer.from(next.value));
  }
  expect(notice).toMatch(/\S/);
  expect(Buffer.concat(got).toString('utf8')).toBe(old + notice + fresh);
});
