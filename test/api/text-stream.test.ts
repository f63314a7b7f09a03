/** A followed log's response body (src/api/text-stream.ts): a local log's bytes go as the file holds them. */
import { expect, it } from 'vitest';
import { textStream } from '../../src/api/text-stream.ts';
import { KEEPALIVE_BYTES, KeepaliveReader } from '../../src/core/log-keepalive.ts';

it('sends byte chunks unchanged (a log that is not UTF-8: the follower counts the file bytes it got), text as UTF-8', async () => {
  const latin1 = Buffer.concat([Buffer.from('caf'), Buffer.from([0xe9]), Buffer.from('\n')]);
  async function* chunks() {
    yield latin1;
    yield 'é\n';
  }
  const stop = new AbortController();
  const body = Buffer.from(await new Response(textStream(chunks(), stop)).arrayBuffer());
  expect(body.equals(Buffer.concat([latin1, Buffer.from('é\n')]))).toBe(true);
  expect(stop.signal.aborted).toBe(true);
});

it('with keepalives: sends one after each interval without a chunk, the chunks whole and their NULs escaped', async () => {
  let release!: () => void;
  const quiet = new Promise<void>((r) => (release = r));
  async function* chunks() {
    yield 'a\0k\n'; // a log that holds what a keepalive is
    await quiet;
    yield Buffer.from('b\n');
  }
  const stop = new AbortController();
  const reader = textStream(chunks(), stop, 50).getReader();
  const pieces: Buffer[] = [];
  const read = async () => {
    const { value } = await reader.read();
    pieces.push(Buffer.from(value!));
  };
  await read();
  expect(pieces[0]!.equals(Buffer.from('a\0\0k\n'))).toBe(true);
  // Quiet: keepalives, and the chunk awaited meanwhile is not lost.
  await read();
  await read();
  expect(pieces.slice(1).every((piece) => piece.equals(Buffer.from(KEEPALIVE_BYTES)))).toBe(true);
  release();
  let rest = Buffer.alloc(0);
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    rest = Buffer.concat([rest, value]);
  }
  // A keepalive may have gone just before it.
  const log = Buffer.from(new KeepaliveReader().logBytes(Buffer.concat([...pieces, rest])));
  expect(log.toString()).toBe('a\0k\nb\n');
  expect(stop.signal.aborted).toBe(true);
});

it('reads a log back out of keepalives and escapes split across pieces', () => {
  const reader = new KeepaliveReader();
  const pieces = [Buffer.from('x\0'), Buffer.from('\0y\0'), Buffer.from('kz\0'), Buffer.from('k')];
  const log = Buffer.concat(pieces.map((piece) => Buffer.from(reader.logBytes(piece))));
  expect(log.equals(Buffer.from('x\0yz'))).toBe(true);
});
