/** Following a local replica's log (src/cloud/local/log-follow.ts): `tail -f` with the log's cap and a stop. */
import { appendFileSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { followLogFile } from '../../src/cloud/local/log-follow.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function logFile(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'boa-follow-'));
  dirs.push(dir);
  const file = join(dir, '0.log');
  writeFileSync(file, text);
  return file;
}

/** Collects what the follower yields while `act` runs against it, until it ends. */
async function collect(chunks: AsyncGenerator<string>, act: (seen: () => string) => Promise<void>) {
  let seen = '';
  const reading = (async () => {
    for await (const chunk of chunks) seen += chunk;
  })();
  await act(() => seen);
  await reading;
  return seen;
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

it('starts a log cut by its cap again from its beginning, and keeps a character split across reads whole', async () => {
  const file = logFile('old line\n');
  let ended = false;
  const chunks = followLogFile(file, {
    tailLines: 10,
    pollMs: 5,
    ended: () => ended,
    signal: new AbortController().signal,
  })!.chunks;
  const seen = await collect(chunks, async (seen) => {
    await until(() => seen() === 'old line\n');
    truncateSync(file, 0); // copytruncate, as log-cap.ts cuts it
    appendFileSync(file, 'cut\n');
    await until(() => seen().endsWith('cut\n'));
    const euro = Buffer.from('€\n');
    appendFileSync(file, euro.subarray(0, 1));
    await new Promise((r) => setTimeout(r, 30));
    appendFileSync(file, euro.subarray(1));
    ended = true;
  });
  expect(seen).toBe('old line\ncut\n€\n');
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
  expect(tail.from).toEqual({ cursor: '2', skip: 0 });
  expect(await collect(tail.chunks, async () => undefined)).toBe('b\nc\n');
  // The cursor it was given and the bytes it got: the rest, nothing twice.
  const from = followLogFile(file, { ...options, tailLines: 2, from: { cursor: '2', skip: 2 } })!;
  expect(from.from).toEqual({ cursor: '4', skip: 0 });
  expect(await collect(from.chunks, async () => undefined)).toBe('c\n');
  const start = followLogFile(file, { ...options, tailLines: 1, from: { cursor: 'start', skip: 1 } })!;
  expect(await collect(start.chunks, async () => undefined)).toBe('\nb\nc\n');
  // Past its end: the log was cut (its cap) since, so it is read from its beginning, said as a gap
  // (what was between the follower's place and the cut is not in it).
  const cut = followLogFile(file, { ...options, tailLines: 2, from: { cursor: '100', skip: 0 } })!;
  expect(cut.gap).toBe(true);
  expect(cut.from).toEqual({ cursor: '0', skip: 0 });
  expect(await collect(cut.chunks, async () => undefined)).toBe('a\nb\nc\n');
  expect(from.gap).toBeUndefined();
});

it('refuses a cursor it did not give, saying what one looks like', () => {
  const file = logFile('a\n');
  const options = { pollMs: 5, ended: () => true, signal: new AbortController().signal, tailLines: 1 };
  for (const cursor of ['2026-11-30T11:08:23Z/0', '-1', '1e3', ''])
    expect(() => followLogFile(file, { ...options, from: { cursor, skip: 0 } })).toThrow(
      /is not a place in this executor's logs: a local log's cursor is "start" or a byte of it/,
    );
});
