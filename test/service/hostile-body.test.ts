/**
 * Memory exhaustion without a valid token: a 200 MB body sent to the real service is refused before it
 * is read (401 for a wrong job token, 413 over the size limit), quickly, and the service's resident
 * memory stays flat. The bodies are streamed from one reused 64 KiB chunk, never allocated whole.
 */
import { request } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unusedPort } from '../cli/cli-harness.ts';
import { killHard, rssBytes, type ServiceProcess, startProcess } from './process-harness.ts';

const MB = 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 'x');
const dataDir = mkdtempSync(join(tmpdir(), 'boa-hostile-'));
let service: ServiceProcess;
let base: { host: string; port: number };
let operator: string;

beforeAll(async () => {
  const port = await unusedPort();
  service = await startProcess(['--data', dataDir, '--port', String(port), '--tick-seconds', '3600']);
  base = { host: '127.0.0.1', port };
  operator = readFileSync(join(dataDir, 'token'), 'utf8').trim();
}, 60_000);
afterAll(async () => {
  if (service) await killHard(service.child);
  rmSync(dataDir, { recursive: true, force: true });
});

/** Streams `bytes` of body until the server answers; resolves with its status and how much went out. */
function sendHuge(path: string, token: string, bytes: number, chunked: boolean) {
  return new Promise<{ status: number; sentBytes: number; ms: number }>((done, fail) => {
    const started = performance.now();
    const headers: Record<string, string | number> = {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
    };
    if (!chunked) headers['content-length'] = bytes;
    const req = request({ ...base, path, method: 'POST', headers });
    let sent = 0;
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      res.resume();
      const result = { status: res.statusCode ?? 0, sentBytes: sent, ms: performance.now() - started };
      req.destroy();
      done(result);
    });
    req.on('error', (error) => {
      if (!answered) fail(error);
    });
    const pump = () => {
      while (!answered && sent < bytes) {
        sent += CHUNK.length;
        if (!req.write(CHUNK)) return void req.once('drain', pump);
      }
      if (!answered) req.end();
    };
    pump();
  });
}

async function registerJob(): Promise<number> {
  const res = await fetch(`http://${base.host}:${base.port}/v1/jobs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${operator}`, 'content-type': 'application/json' },
    body: JSON.stringify({ class: 'cifar10' }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: number }).id;
}

describe('a 200 MB body', () => {
  it('to a job route with a wrong job token: 401 before the body is read, memory flat', async () => {
    const id = await registerJob();
    const send = (chunked: boolean) => sendHuge(`/v1/jobs/${id}/progress`, 'anything', 200 * MB, chunked);
    // The first requests warm the handlers and the heap up; growth is measured after them.
    for (const chunked of [false, true, false, true]) await send(chunked);
    const before = rssBytes(service.child.pid!);
    for (const chunked of [false, true, false, true, false, true]) {
      const res = await send(chunked);
      expect(res.status).toBe(401);
      expect(res.sentBytes).toBeLessThan(200 * MB);
      expect(res.ms).toBeLessThan(5000);
    }
    const growth = rssBytes(service.child.pid!) - before;
    console.log(`RSS growth over six 200 MB bodies with a wrong job token: ${(growth / MB).toFixed(1)} MB`);
    // Unfixed, one such body cost 650 MB that stayed. The server now discards at most 64 MB of an
    // unread body (hono's node adapter) before closing; those chunks are garbage until the next GC,
    // which is why this bound is not a few MB (measured 3-30 MB).
    expect(growth).toBeLessThan(40 * MB);
  }, 60_000);

  it('from the operator: 413 at the limit, not parsed, memory flat', async () => {
    const before = rssBytes(service.child.pid!);
    for (const chunked of [false, true, false, true]) {
      const res = await sendHuge('/v1/jobs', operator, 200 * MB, chunked);
      expect(res.status).toBe(413);
      expect(res.sentBytes).toBeLessThan(200 * MB);
      expect(res.ms).toBeLessThan(5000);
    }
    const growth = rssBytes(service.child.pid!) - before;
    console.log(`RSS growth over four 200 MB operator bodies: ${(growth / MB).toFixed(1)} MB`);
    expect(growth).toBeLessThan(40 * MB);
  }, 60_000);
});
