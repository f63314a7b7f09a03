/**
 * `boa jobs logs -f` on a connection that goes silent without closing (a NAT or proxy that forgot it:
 * no FIN, no RST, no byte ever again): the follow asks for keepalives, takes KEEPALIVES_MISSED intervals
 * without a byte as a dead connection and follows on from where it was; keepalives on a live one are
 * neither shown nor counted as the log's bytes, and a NUL of the log comes through as it is.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { KEEPALIVE_BYTES } from '../../src/core/log-keepalive.ts';
import { runBoa } from './cli-harness.ts';

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

const doneJob = {
  id: 1,
  name: 'a',
  class: 'cifar10',
  state: 'done',
  width: 0,
  lentGpus: 0,
  generation: 1,
  restarts: 0,
  restartNotBefore: null,
  waitingFor: null,
  exitCode: 0,
  failureReason: null,
  failedRank: null,
  finishedAt: '2026-12-01T00:00:00.000Z',
  gpuHours: 1,
  workload: { command: ['x'] },
};

/** A fake boa: the log requests get the answers in turn (each request kept), job reads a done job. */
async function fakeBoa(logAnswers: Array<(res: ServerResponse) => void>) {
  const logRequests: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    if (req.url!.startsWith('/v1/jobs/1/logs')) {
      logRequests.push(req);
      return logAnswers[logRequests.length - 1]!(res);
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(doneJob));
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  cleanups.push(
    () =>
      new Promise<void>((closed) => {
        server.closeAllConnections();
        server.close(() => closed());
      }),
  );
  const cwd = mkdtempSync(join(tmpdir(), 'boa-cli-silent-'));
  cleanups.push(() => rmSync(cwd, { recursive: true, force: true }));
  const env = {
    BOA_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    BOA_TOKEN: 'tok-1234567890abcdef',
  };
  return { env, cwd, logRequests };
}

const logHeaders = (keepaliveSeconds: string) => ({
  'content-type': 'text/plain; charset=utf-8',
  'boa-generation': '1',
  'boa-log-cursor': 'c1',
  'boa-log-skip': '0',
  'boa-log-keepalive': keepaliveSeconds,
});

it('follows on from where it was once the connection sends nothing for 3 keepalive intervals', async () => {
  const { env, cwd, logRequests } = await fakeBoa([
    (res) => {
      res.writeHead(200, logHeaders('0.3'));
      // One keepalive, then silence on a connection left open.
      res.write(Buffer.concat([Buffer.from('line 1\n'), KEEPALIVE_BYTES]));
    },
    (res) => {
      res.writeHead(200, logHeaders('0.3'));
      res.end(Buffer.from('tw\0\0o\n')); // the log's NUL, escaped
    },
  ]);
  const run = await runBoa(['jobs', 'logs', '1', '-f'], env, cwd);
  expect(run.status, run.stderr).toBe(0);
  expect(run.stdout).toBe('line 1\ntw\0o\n');
  expect(run.stderr).toMatch(
    /the log of job 1 sent nothing for 0\.9 s; following it again from where it was/,
  );
  expect(logRequests).toHaveLength(2);
  expect(logRequests[0]!.headers['boa-log-keepalive']).toBeDefined();
  const resumed = new URL(logRequests[1]!.url!, 'http://x').searchParams;
  // The log's 7 bytes, not the keepalive's 2.
  expect([resumed.get('cursor'), resumed.get('skip')]).toEqual(['c1', '7']);
}, 60_000);

it('keeps following a quiet log whose keepalives come, showing none of them', async () => {
  const { env, cwd, logRequests } = await fakeBoa([
    (res) => {
      res.writeHead(200, logHeaders('0.2'));
      res.write('line 1\n');
      // Quiet for 10 intervals, a keepalive at each.
      let sent = 0;
      const timer = setInterval(() => {
        sent += 1;
        if (sent <= 10) return void res.write(KEEPALIVE_BYTES);
        clearInterval(timer);
        res.end('line 2\n');
      }, 200);
    },
  ]);
  const run = await runBoa(['jobs', 'logs', '1', '-f'], env, cwd);
  expect(run.status, run.stderr).toBe(0);
  expect(run.stdout).toBe('line 1\nline 2\n');
  expect(run.stderr).not.toMatch(/following it again/);
  expect(logRequests).toHaveLength(1);
}, 60_000);
