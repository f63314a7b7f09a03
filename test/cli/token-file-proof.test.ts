/**
 * The CLI sends the operator token it read from the data dir's `token` file only to a service that
 * proves it holds it (GET /token-proof: src/core/token-proof.ts). Until 2026-12-02 it sent it to any
 * loopback URL: with boa down, another local user's program listening on boa's port got it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BoaClient } from '../../src/cli/client.ts';
import { runBoa, startCliService } from './cli-harness.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

/** A local HTTP server, closed after the test, that records every request's Authorization header. */
async function listening(
  handle: (req: IncomingMessage, res: import('node:http').ServerResponse) => void,
  port = 0,
) {
  const seen: { path: string; authorization: string | undefined }[] = [];
  const server: Server = createServer((req, res) => {
    seen.push({ path: req.url ?? '', authorization: req.headers.authorization });
    handle(req, res);
  });
  await new Promise<void>((ready) => server.listen(port, '127.0.0.1', ready));
  cleanups.push(() => new Promise((closed) => server.close(() => closed())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

/** A service's data dir with its generated token, as main.ts leaves it. */
function dataDirWith(cwd: string, token: string): string {
  const dir = join(cwd, 'data');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'token'), `${token}\n`, { mode: 0o600 });
  return dir;
}

describe('the token file and a local URL', () => {
  it("is not sent to another program on boa's port, whatever it answers", async () => {
    const s = await startCliService();
    cleanups.push(s.close);
    dataDirWith(s.cwd, s.token);
    // boa is down; another user's program listens on its port and answers as boa would, as best it can.
    const answers: [number, string][] = [
      [200, JSON.stringify({ proof: 'A'.repeat(43) })],
      [404, JSON.stringify({ error: { code: 'not_found', message: 'no route' } })],
      [200, 'not json'],
    ];
    for (const [status, body] of answers) {
      const impostor = await listening((_, res) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(body);
      });
      const run = await runBoa(['budget', 'set', '40'], { BOA_URL: impostor.url }, s.cwd);
      expect(impostor.seen.length).toBeGreaterThan(0);
      // No request carried the token, nor any token at all.
      expect(impostor.seen.filter((r) => r.authorization !== undefined)).toEqual([]);
      expect(run.status).toBe(4);
      expect(run.stderr).toMatch(
        new RegExp(
          `^boa: the service at ${impostor.url} did not prove it holds the operator token in ${join(s.cwd, 'data', 'token')} .*so the token was not sent`,
        ),
      );
    }
    // The same file, the boa that wrote it: the newcomer's path works as before.
    const run = await runBoa(['budget', 'set', '40'], { BOA_URL: s.url }, s.cwd);
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
  });

  it('is not sent to a program that relays the question to the boa on another port', async () => {
    const s = await startCliService();
    cleanups.push(s.close);
    dataDirWith(s.cwd, s.token);
    const target = new URL(s.url);
    // Everything it gets, passed on to boa and boa's answer back: boa's proof names boa's own port.
    const relay = await listening((req, res) => {
      const onward = request(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      req.pipe(onward);
    });
    const run = await runBoa(['budget', 'set', '40'], { BOA_URL: relay.url }, s.cwd);
    expect(relay.seen.map((r) => r.path)).toEqual([expect.stringMatching(/^\/token-proof\?nonce=/)]);
    expect(relay.seen.filter((r) => r.authorization !== undefined)).toEqual([]);
    expect(run.status).toBe(4);
    expect(run.stderr).toMatch(
      /it answered GET \/token-proof with a wrong proof\), so the token was not sent/,
    );
  });

  it('is proved before each request, not once: what answers after boa stops need not be boa', async () => {
    const s = await startCliService();
    const tokenFile = join(dataDirWith(s.cwd, s.token), 'token');
    const client = new BoaClient({ url: s.url, token: s.token, tokenSource: 'file', tokenFile });
    await client.json('GET', '/v1/budget');
    // boa stops (a restart under a follow, a wait); another program takes its port meanwhile.
    await s.close();
    const impostor = await listening(
      (_, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      },
      Number(new URL(s.url).port),
    );
    await expect(client.json('GET', '/v1/budget')).rejects.toThrow(/so the token was not sent/);
    await expect(client.stream('/v1/jobs/1/logs?rank=0&follow=true', () => undefined)).rejects.toThrow(
      /so the token was not sent/,
    );
    expect(impostor.seen.length).toBe(2);
    expect(impostor.seen.filter((r) => r.authorization !== undefined)).toEqual([]);
  });

  it('a token given (BOA_TOKEN) is sent as given, proof or not', async () => {
    const impostor = await listening((_, res) => {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'not_found', message: 'no route' } }));
    });
    const run = await runBoa(
      ['budget', 'get'],
      { BOA_URL: impostor.url, BOA_TOKEN: 'x'.repeat(20) },
      process.cwd(),
    );
    expect(run.status).toBe(1);
    expect(impostor.seen.map((r) => r.authorization)).toEqual([`Bearer ${'x'.repeat(20)}`]);
  });
});
