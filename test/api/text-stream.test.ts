/** A followed log's response body (src/api/text-stream.ts): a local log's bytes go as the file holds them. */
import { expect, it } from 'vitest';
import { textStream } from '../../src/api/text-stream.ts';

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
