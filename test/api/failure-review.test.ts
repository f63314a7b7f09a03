/**
 * A failure-mode review of the API and the store, against their promises: bad input gets a clear error
 * naming what is wrong and what is allowed; nothing stored is lost; state changes are transactional (a
 * write the store refuses leaves memory as the store holds it, so the service answers after it as it
 * will after a restart). Each test states one promise; those that once broke name the fix.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { runBoa } from '../cli/cli-harness.ts';
import { failOnce } from '../helpers/fail-once.ts';
import { startService } from '../service/harness.ts';

type Booted = Awaited<ReturnType<typeof startService>>;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

async function started(options: Parameters<typeof startService>[0] = {}) {
  const s = await startService(options);
  cleanups.push(s.close);
  return s;
}

/** A request with the body sent as given (raw text) and the Content-Type given, as the operator. */
async function raw(s: Booted, method: string, path: string, body: string, headers: Record<string, string>) {
  const res = await s.app.request(path, {
    method,
    headers: { authorization: `Bearer ${s.token}`, ...headers },
    body,
  });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as any, headers: res.headers };
}

const submit = (s: Booted, body: unknown, key: string) =>
  raw(s, 'POST', '/v1/jobs', JSON.stringify(body), {
    'content-type': 'application/json',
    'idempotency-key': key,
  });

describe('an Idempotency-Key replay whose store write fails', () => {
  // Broke: the replay put the new token's hash in memory, then wrote it; a refused write (disk full)
  // answered 500 with no token, and the job's only working token was one nobody had, so its launcher's
  // polls were refused until its lease ran out (lost), while a restart brought the first token back.
  it('leaves the first token working, as the store holds it; a retry then replaces it', async () => {
    const s = await started();
    const first = await submit(s, { class: 'cifar10', name: 'r' }, 'k-1');
    expect(first.status).toBe(201);
    const poll = (token: string) =>
      s.request('GET', `/v1/jobs/${first.body.id}/allocation`, undefined, token);

    failOnce(s.repo, 'updateJob');
    const failed = await submit(s, { class: 'cifar10', name: 'r' }, 'k-1');
    expect(failed.status).toBeGreaterThanOrEqual(500);
    expect((await poll(first.body.token)).status).toBe(200);

    const again = await submit(s, { class: 'cifar10', name: 'r' }, 'k-1');
    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({ id: first.body.id, replayed: true, tokenReplaced: true });
    expect((await poll(again.body.token)).status).toBe(200);
    expect((await poll(first.body.token)).status).toBe(401);
    expect((await s.request('GET', '/v1/jobs')).body.jobs).toHaveLength(1);
  });
});

describe('bad input, each refused naming the field and what it takes', () => {
  // Held: a tampered page cursor is a 400 naming `before` and what it must be, never a page of nothing.
  it('a tampered before', async () => {
    const s = await started();
    const cases: Array<[string, RegExp]> = [
      ['0', /^before must be a whole number from 1 to 9007199254740991$/],
      ['-1', /^before must be a whole number from 1 to 9007199254740991$/],
      ['1e3', /^before must be a number in decimal digits \(e\.g\. 20\), got "1e3"$/],
      ['9007199254740992', /^before must be a whole number from 1 to 9007199254740991$/],
      ['abc', /^before must be a number in decimal digits/],
      ['1&before=2', /^before given more than once: give it once$/],
    ];
    for (const [before, message] of cases) {
      const res = await s.request('GET', `/v1/jobs?before=${before}`);
      expect(res.status, before).toBe(400);
      expect(res.body.error.field, before).toBe('before');
      expect(res.body.error.message, before).toMatch(message);
    }
  });

  // Held: JSON.parse keeps a duplicate key's last value; the job registered and the Idempotency-Key's
  // fingerprint both read that, so a retry written without the duplicate is the same request.
  it('a duplicate key counts as its last value, for the job and for its Idempotency-Key', async () => {
    const s = await started();
    const first = await raw(s, 'POST', '/v1/jobs', '{"class":"cifar10","name":"a","name":"b"}', {
      'content-type': 'application/json',
      'idempotency-key': 'dup',
    });
    expect(first.status).toBe(201);
    expect(first.body.job.name).toBe('b');
    const again = await submit(s, { class: 'cifar10', name: 'b' }, 'dup');
    expect(again.body).toMatchObject({ id: first.body.id, replayed: true });
    const other = await submit(s, { class: 'cifar10', name: 'a' }, 'dup');
    expect(other.status).toBe(422);
    expect(other.body.error.code).toBe('idempotency_key_reused');
  });
});

describe('the CLI given a server that is not boa, or a boa that fails', () => {
  /** A server answering every request with `status` and `body` as JSON. */
  async function answering(status: number, body: string) {
    const server = createServer((_req, res) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(body);
    });
    await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
    const cwd = mkdtempSync(join(tmpdir(), 'boa-review-'));
    cleanups.push(async () => {
      await new Promise((closed) => server.close(closed));
      rmSync(cwd, { recursive: true, force: true });
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return (args: string[]) => runBoa(args, { BOA_URL: url, BOA_TOKEN: 'some-token' }, cwd);
  }

  // Broke: a 200 whose JSON was not boa's (another service at BOA_URL, a proxy's `{}`) printed "job
  // undefined is undefined" for `jobs cancel` and exited 0, so a script took the job as cancelled; most
  // other commands threw a TypeError's stack trace.
  it('a JSON answer without what boa sends is exit 1, one line saying so, never a success', async () => {
    const boa = await answering(200, '{}');
    const cancel = await boa(['jobs', 'cancel', '7']);
    expect(cancel.status).toBe(1);
    expect(cancel.stdout).toBe('');
    expect(cancel.stderr).toMatch(
      /^boa: unexpected answer from http:\/\/127\.0\.0\.1:\d+: POST \/v1\/jobs\/7\/cancel answered with JSON without "id", "state" \(is BOA_URL a boa service\?\)\n$/,
    );
    const json = await boa(['--json', 'jobs', 'cancel', '7']);
    expect([json.status, json.stdout]).toEqual([1, '']);
    // `jobs wait` polled such answers until its timeout (exit 6, "job undefined undefined").
    for (const args of [
      ['status'],
      ['jobs', 'list'],
      ['budget', 'set', '40'],
      ['jobs', 'wait', '7'],
      ['plan'],
    ]) {
      const run = await boa(args);
      expect(run.status).toBe(1);
      expect(run.stderr).toMatch(/^boa: unexpected answer from .* answered with JSON without .*\n$/);
    }
  });

  it('JSON that is no object (null, a list) is the same one line, not a stack trace', async () => {
    for (const body of ['null', '[]', '7']) {
      const boa = await answering(200, body);
      const run = await boa(['jobs', 'show', '7']);
      expect(run.status).toBe(1);
      expect(run.stderr).toMatch(
        /^boa: unexpected answer from .*: GET \/v1\/jobs\/7 answered with JSON that is not an object/,
      );
      expect(run.stderr.split('\n')).toHaveLength(2);
    }
  });

  // Held: a boa that fails says so with its own message, exit 1 (not 2: it is not the input's fault).
  it("a boa's 500 is exit 1 with the service's own message", async () => {
    const boa = await answering(
      500,
      '{"error":{"code":"internal","message":"internal error; see the service log"}}',
    );
    const run = await boa(['jobs', 'cancel', '7']);
    expect(run.status).toBe(1);
    expect(run.stderr).toBe('boa: the service failed: internal error; see the service log\n');
  });
});

describe('a store that refuses writes', () => {
  // Held: another process holding the database's write lock (a sqlite3 shell in a transaction, a
  // backup tool) makes every write wait busy_timeout, then fail; what failed is not in memory either.
  it('locked by another process (SQLITE_BUSY): writes fail whole, and go through once it is released', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'boa-review-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const s = await started({ dataDir: dir });
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 })).status).toBe(200);

    const other = new Database(join(dir, 'boa.sqlite'));
    other.exec('BEGIN IMMEDIATE');
    try {
      const budget = await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 20 });
      expect(budget.status).toBe(503);
      expect(budget.body.error).toMatchObject({ code: 'store_busy' });
      expect(budget.body.error.message).toMatch(/locked by another process \(SQLITE_BUSY\)/);
      const job = await s.request('POST', '/v1/jobs', { class: 'cifar10', name: 'x' });
      expect(job.status).toBe(503);
      // Reads go on, and say what the store holds.
      expect((await s.request('GET', '/v1/budget')).body.gpuHoursPerHour).toBe(40);
      expect((await s.request('GET', '/v1/jobs')).body.jobs).toEqual([]);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 20 })).body.gpuHoursPerHour).toBe(20);
    const job = await s.request('POST', '/v1/jobs', { class: 'cifar10', name: 'x' });
    expect(job.status).toBe(201);
    expect((await s.request('GET', '/v1/jobs')).body.jobs.map((j: any) => j.name)).toEqual(['x']);
  });

  // Broke (as the lock above): a full disk and a database that cannot be written were each a 500
  // "internal error; see the service log". SQLite's own errors here: max_page_count caps the file as a
  // full disk does (SQLITE_FULL), query_only refuses every write (SQLITE_READONLY).
  it('a full disk (SQLITE_FULL) is a 503 saying so; nothing of the submission is kept; then it goes through', async () => {
    const s = await started();
    const client = s.db.$client;
    const pages = client.pragma('page_count', { simple: true }) as number;
    client.pragma(`max_page_count = ${pages}`);
    let refused: Awaited<ReturnType<typeof submit>>;
    try {
      // Submissions until one needs a page more than the file may have.
      let n = 0;
      do refused = await submit(s, { class: 'cifar10', name: `j${n}` }, `full-${n++}`);
      while (refused.status === 201 && n < 500);
    } finally {
      client.pragma('max_page_count = 1073741823');
    }
    expect(refused.status).toBe(503);
    expect(refused.body.error).toMatchObject({ code: 'store_full' });
    expect(refused.body.error.message).toMatch(/^the disk holding the database is full \(SQLITE_FULL\)/);
    const listed = (await s.request('GET', '/v1/jobs')).body.jobs.map((j: any) => j.name);
    const again = await submit(s, { class: 'cifar10', name: `j${listed.length}` }, `full-${listed.length}`);
    expect(again.status).toBe(201);
    expect(again.body.replayed).toBeUndefined();
    expect((await s.request('GET', '/v1/jobs')).body.jobs).toHaveLength(listed.length + 1);
  });

  it('a database that cannot be written (SQLITE_READONLY) is a 503 saying so; the budget stays', async () => {
    const s = await started();
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 })).status).toBe(200);
    s.db.$client.pragma('query_only = 1');
    try {
      const put = await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 20 });
      expect(put.status).toBe(503);
      expect(put.body.error).toMatchObject({ code: 'store_read_only' });
      expect(put.body.error.message).toMatch(/^the database cannot be written \(SQLITE_READONLY/);
      expect((await s.request('GET', '/v1/budget')).body.gpuHoursPerHour).toBe(40);
    } finally {
      s.db.$client.pragma('query_only = 0');
    }
  });

  // Held: a class put whose transaction fails (disk full) leaves the class as stored.
  it('a class put refused by the store leaves the class as it was', async () => {
    const s = await started();
    const before = (await s.request('GET', '/v1/classes')).body.classes.find(
      (c: any) => c.name === 'cifar10',
    );
    const profile = { ...before.profile, rescaleSeconds: before.profile.rescaleSeconds + 7 };
    failOnce(s.repo, 'putClass');
    const put = await s.request('PUT', '/v1/classes/cifar10', { profile, priorRatePerHour: 3 });
    expect(put.status).toBeGreaterThanOrEqual(500);
    const after = (await s.request('GET', '/v1/classes')).body.classes.find((c: any) => c.name === 'cifar10');
    expect(after).toEqual(before);
    expect((await s.request('PUT', '/v1/classes/cifar10', { profile, priorRatePerHour: 3 })).status).toBe(
      200,
    );
  });
});
