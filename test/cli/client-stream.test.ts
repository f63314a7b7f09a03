/**
 * The CLI's streamed read (client.ts stream): a body cut inside a character counts only the whole
 * characters as got, so a follower asking again from its bytes gets that character whole, not twice
 * broken; the answer's headers reach the caller as it starts.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { BoaClient, unfinishedCharBytes } from '../../src/cli/client.ts';

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((closed) => server.close(closed));
});

describe('a streamed answer', () => {
  it('counts the bytes of a character it was cut in as not got, and gives its headers first', async () => {
    // "né" then the first byte of "ü" (c3 bc), and the connection drops.
    const body = Buffer.concat([Buffer.from('n\u00e9'), Buffer.from([0xc3])]);
    const server = createServer((_, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'boa-log-gap': 'true' });
      res.write(body, () => setTimeout(() => res.destroy(), 20));
    });
    servers.push(server);
    await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const client = new BoaClient({ url, token: undefined, tokenSource: 'none' });
    let text = '';
    const events: string[] = [];
    const answer = await client.stream(
      '/v1/jobs/1/logs',
      (piece) => {
        events.push('text');
        text += piece;
      },
      (header) => events.push(`gap ${header('boa-log-gap')}`),
    );
    expect(answer.cut).toBe(true);
    expect(text).toBe('n\u00e9');
    expect(answer.bytes).toBe(Buffer.byteLength('n\u00e9'));
    expect(events[0]).toBe('gap true');
  });

  it('finds the start of a character a chunk ends inside', () => {
    const euro = Buffer.from('\u20ac'); // e2 82 ac
    const face = Buffer.from('\u{1f600}'); // f0 9f 98 80
    expect(unfinishedCharBytes(Buffer.from('abc'))).toBe(0);
    expect(unfinishedCharBytes(euro)).toBe(0);
    expect(unfinishedCharBytes(euro.subarray(0, 2))).toBe(2);
    expect(unfinishedCharBytes(Buffer.concat([Buffer.from('a'), euro.subarray(0, 1)]))).toBe(1);
    expect(unfinishedCharBytes(face.subarray(1, 3))).toBe(0); // no lead byte within the last 3
    expect(unfinishedCharBytes(face.subarray(0, 3))).toBe(3);
    expect(unfinishedCharBytes(face)).toBe(0);
  });
});
