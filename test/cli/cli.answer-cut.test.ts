/**
 * An answer that breaks off after it began (the service stopped mid-answer, a proxy dropped the
 * connection) is the service out of reach, exit 3 with one line, as docs/cli.md says; it was undici's
 * "TypeError: terminated" thrown as it came, a stack trace and exit 1.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runBoa } from './cli-harness.ts';

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

/**
 * A server that starts a JSON answer of 1000 bytes, sends 20 of them and drops the connection; or,
 * `beforeAnswer`, drops it on the request's first bytes (boa killed after it saved a job).
 */
async function cutServer(beforeAnswer = false): Promise<string> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.once('data', () => {
      if (!beforeAnswer)
        socket.write(
          'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"gpuHoursPerHour":',
        );
      setTimeout(() => socket.destroy(), 50);
    });
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  cleanups.push(
    () =>
      new Promise<void>((closed) => {
        for (const s of sockets) s.destroy();
        server.close(() => closed());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function tempCwd(): string {
  const cwd = mkdtempSync(join(tmpdir(), 'boa-cli-cut-'));
  cleanups.push(() => rmSync(cwd, { recursive: true, force: true }));
  return cwd;
}

describe('an answer cut off mid-body', () => {
  it('is exit 3 with one line naming the request, never a stack trace', async () => {
    const url = await cutServer();
    const run = await runBoa(['budget', 'get'], { BOA_URL: url, BOA_TOKEN: 'tok-123' }, tempCwd());
    expect(run.stderr).not.toMatch(/TypeError|at .*undici|node:internal/);
    expect(run.stderr.trim()).toBe(
      `boa: the boa service at ${url} broke off its answer to GET /v1/budget (other side closed): try again`,
    );
    expect(run.status).toBe(3);
  });

  it('says that a request that changes something may have been carried out', async () => {
    const url = await cutServer();
    const run = await runBoa(['budget', 'set', '40'], { BOA_URL: url, BOA_TOKEN: 'tok-123' }, tempCwd());
    expect(run.stderr).not.toMatch(/TypeError/);
    expect(run.stderr).toMatch(
      /broke off its answer to PUT \/v1\/budget \(other side closed\): it may have been carried out/,
    );
    expect(run.status).toBe(3);
  });

  it('says a write whose connection dropped before any answer may have been carried out, not that boa is out of reach', async () => {
    // Found in review: "cannot reach ... (is it running?)" read as nothing done, and a second submit
    // made a second job.
    const url = await cutServer(true);
    const run = await runBoa(
      ['jobs', 'submit', 'cifar10', '--self-launched'],
      { BOA_URL: url, BOA_TOKEN: 'tok-123' },
      tempCwd(),
    );
    expect(run.stderr).toMatch(
      /POST \/v1\/jobs .*it may have been carried out.*look before sending it again/,
    );
    expect(run.stderr).not.toMatch(/is it running/);
    expect(run.status).toBe(3);
    const read = await runBoa(['budget', 'get'], { BOA_URL: url, BOA_TOKEN: 'tok-123' }, tempCwd());
    expect(read.stderr).toMatch(/cannot reach|try again/);
    expect(read.stderr).not.toMatch(/carried out/);
  });
});
