/**
 * `jobs wait` and `jobs logs -f` across a restart of boa: a poll answered 503 "starting" (what every
 * request gets while a restarted boa adopts its jobs) or a connection dropped is waited out, as the
 * jobs run on; it ended the wait with exit 1 or 3, which a script reads as the wait's answer.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { runBoa } from './cli-harness.ts';

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

type Answer = (res: ServerResponse) => void;

const job = (state: string) => ({
  id: 1,
  name: 'a',
  class: 'cifar10',
  state,
  width: state === 'running' ? 4 : 0,
  lentGpus: 0,
  generation: 1,
  restarts: 0,
  restartNotBefore: null,
  waitingFor: null,
  exitCode: null,
  failureReason: null,
  failedRank: null,
  finishedAt: state === 'done' ? '2026-12-01T00:00:00.000Z' : null,
  gpuHours: 1,
  workload: { command: ['x'] },
});

const json =
  (status: number, body: unknown): Answer =>
  (res) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
const starting = json(503, { error: { code: 'starting', message: 'boa is starting' } });
const dropped: Answer = (res) => res.socket!.destroy();

/** A fake boa: log requests get `log`, job reads the answers in turn (the last one from then on). */
async function fakeBoa(jobReads: Answer[], log?: Answer): Promise<{ url: string; cwd: string }> {
  let n = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (log && req.url!.startsWith('/v1/jobs/1/logs')) return log(res);
    jobReads[Math.min(n++, jobReads.length - 1)]!(res);
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  cleanups.push(
    () =>
      new Promise<void>((closed) => {
        server.closeAllConnections();
        server.close(() => closed());
      }),
  );
  const cwd = mkdtempSync(join(tmpdir(), 'boa-cli-restarting-'));
  cleanups.push(() => rmSync(cwd, { recursive: true, force: true }));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, cwd };
}

const token = 'tok-1234567890abcdef';

it.each([
  ['a 503 while it starts', starting],
  ['a dropped connection', dropped],
])('jobs wait rides out %s and exits 0 when the job is done', async (_, transient) => {
  const { url, cwd } = await fakeBoa([json(200, job('running')), transient, json(200, job('done'))]);
  const run = await runBoa(
    ['jobs', 'wait', '1', '--interval', '0.1'],
    { BOA_URL: url, BOA_TOKEN: token },
    cwd,
  );
  expect(run.stderr).toMatch(/trying again/);
  expect(run.status, run.stderr).toBe(0);
});

it('jobs wait says a restart it waits out once, not at every poll; again after an answer', async () => {
  const { url, cwd } = await fakeBoa([
    json(200, job('running')),
    starting,
    starting,
    starting,
    json(200, job('running')),
    dropped,
    dropped,
    json(200, job('done')),
  ]);
  const run = await runBoa(
    ['jobs', 'wait', '1', '--interval', '0.1'],
    { BOA_URL: url, BOA_TOKEN: token },
    cwd,
  );
  expect(run.status, run.stderr).toBe(0);
  const retries = run.stderr.split('\n').filter((line) => line.includes('trying again'));
  expect(retries).toHaveLength(2);
  expect(retries[0]).toMatch(/starting; trying again for up to 5 minutes$/);
});

it('jobs wait still ends on an error that is not boa restarting', async () => {
  const { url, cwd } = await fakeBoa([
    json(200, job('running')),
    json(500, { error: { code: 'internal', message: 'boom' } }),
  ]);
  const run = await runBoa(
    ['jobs', 'wait', '1', '--interval', '0.1'],
    { BOA_URL: url, BOA_TOKEN: token },
    cwd,
  );
  expect(run.status).toBe(1);
});

it('logs -f rides out a 503 read of the job after its log ended, and exits 0 when it is done', async () => {
  const { url, cwd } = await fakeBoa([starting, json(200, job('done'))], (res) => {
    res.writeHead(200, {
      'content-type': 'text/plain',
      'boa-generation': '1',
      'boa-log-cursor': 'c',
      'boa-log-skip': '0',
    });
    res.end('epoch 1\nepoch 2\n');
  });
  const run = await runBoa(['jobs', 'logs', '1', '-f'], { BOA_URL: url, BOA_TOKEN: token }, cwd);
  expect(run.stdout).toBe('epoch 1\nepoch 2\n');
  expect(run.status, run.stderr).toBe(0);
});
