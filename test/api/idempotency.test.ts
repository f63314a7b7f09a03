/**
 * POST /v1/jobs with an Idempotency-Key: a retry (the client never saw the first answer) gets the job
 * the first request created, never a second job to run and pay for; the same key with another body is
 * refused; a malformed key is a 400 naming the header.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Executor } from '../../src/service/ports.ts';
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

/** POST /v1/jobs as the operator, with the key (if any) and the body as given (an object or raw text). */
async function submit(s: Booted, body: unknown, key?: string) {
  const headers: Record<string, string> = {
    authorization: `Bearer ${s.token}`,
    'content-type': 'application/json',
  };
  if (key !== undefined) headers['idempotency-key'] = key;
  const res = await s.app.request('/v1/jobs', {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const json: any = await res.json();
  return { status: res.status, replayed: res.headers.get('idempotent-replayed'), body: json };
}

const jobCount = async (s: Booted) => (await s.request('GET', '/v1/jobs')).body.jobs.length as number;

/** An executor that accepts every workload and runs nothing: enough to register executed jobs. */
const idleExecutor: Executor = { kind: 'local', reconcile: async () => [], close: async () => {} };

describe('POST /v1/jobs with an Idempotency-Key', () => {
  it('a retried submit creates one job; the replay says so and hands out a new token (self-launched)', async () => {
    const s = await started();
    const first = await submit(s, { class: 'cifar10', name: 'r18' }, 'run-42');
    expect(first.status).toBe(201);
    expect(first.replayed).toBeNull();
    expect(first.body).not.toHaveProperty('replayed');

    const again = await submit(s, { class: 'cifar10', name: 'r18' }, 'run-42');
    expect(again.status).toBe(201);
    expect(again.replayed).toBe('true');
    expect(again.body).toMatchObject({ id: first.body.id, replayed: true, tokenReplaced: true });
    expect(again.body.job).toMatchObject({ id: first.body.id, name: 'r18', state: 'waiting' });
    expect(await jobCount(s)).toBe(1);

    // boa kept only the first token's hash: the replay's token is new and replaces it.
    expect(again.body.token).not.toBe(first.body.token);
    const allocation = (token: string) =>
      s.request('GET', `/v1/jobs/${first.body.id}/allocation`, undefined, token);
    expect((await allocation(again.body.token)).status).toBe(200);
    expect((await allocation(first.body.token)).status).toBe(401);
  });

  it("a self-launched job's replay renews its lease: its launcher can only start polling now", async () => {
    const s = await started();
    const first = await submit(s, { class: 'cifar10' }, 'lease');
    s.clock.advance(300);
    await submit(s, { class: 'cifar10' }, 'lease');
    expect(s.service.leases.lastSeen(s.service.job(first.body.id))).toBe(s.clock.now());
  });

  it('the body is compared as JSON: another field order or spacing is the same request', async () => {
    const s = await started();
    const first = await submit(s, '{"class":"cifar10","name":"a"}', 'k');
    const again = await submit(s, '{ "name": "a",\n  "class": "cifar10" }', 'k');
    expect(again.replayed).toBe('true');
    expect(again.body.id).toBe(first.body.id);
    expect(await jobCount(s)).toBe(1);
  });

  it('the same key with a different body is 422 naming the key and the job, and creates nothing', async () => {
    const s = await started();
    const first = await submit(s, { class: 'cifar10', name: 'a' }, 'nightly-7');
    const other = await submit(s, { class: 'cifar10', name: 'b' }, 'nightly-7');
    expect(other.status).toBe(422);
    expect(other.replayed).toBeNull();
    expect(other.body.error).toMatchObject({
      code: 'idempotency_key_reused',
      field: 'idempotency-key',
      jobId: first.body.id,
    });
    expect(other.body.error.message).toMatch(
      new RegExp(`^Idempotency-Key nightly-7 was used for a different request \\(job ${first.body.id}\\)`),
    );
    expect(await jobCount(s)).toBe(1);
    // The first job's token is untouched by the refusal.
    const read = await s.request('GET', `/v1/jobs/${first.body.id}/allocation`, undefined, first.body.token);
    expect(read.status).toBe(200);
    // Another key is another job.
    expect((await submit(s, { class: 'cifar10', name: 'b' }, 'nightly-8')).status).toBe(201);
    expect(await jobCount(s)).toBe(2);
  });

  it.each([
    ['empty', '', /^Idempotency-Key is empty; it must be 1 to 255 printable ASCII characters/],
    ['256 characters', 'k'.repeat(256), /^Idempotency-Key is too long; it must be 1 to 255 printable/],
    ['a tab', 'a\tb', /^Idempotency-Key has a character that is not printable ASCII; it must be 1 to 255/],
    ['non-ASCII', 'café', /^Idempotency-Key has a character that is not printable ASCII/],
  ])(
    'a key that is %s is 400 naming the header and what is allowed; nothing created',
    async (_, key, message) => {
      const s = await started();
      const bad = await submit(s, { class: 'cifar10' }, key);
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatchObject({ code: 'invalid', field: 'idempotency-key' });
      expect(bad.body.error.message).toMatch(message);
      expect(await jobCount(s)).toBe(0);
    },
  );

  it('takes a key of 255 printable ASCII characters, spaces and quotes included', async () => {
    const s = await started();
    const key = `"${'~ x'.repeat(84)}"`;
    expect(key).toHaveLength(254);
    expect((await submit(s, { class: 'cifar10' }, key)).status).toBe(201);
    expect((await submit(s, { class: 'cifar10' }, `${key}!`)).status).toBe(201);
    expect((await submit(s, { class: 'cifar10' }, key)).replayed).toBe('true');
    expect(await jobCount(s)).toBe(2);
  });

  it('two concurrent submits with one key create one job', async () => {
    const s = await started();
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => submit(s, { class: 'cifar10', name: 'c' }, 'once')),
    );
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201]);
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
    expect(answers.filter((a) => a.replayed === 'true')).toHaveLength(3);
    expect(await jobCount(s)).toBe(1);
  });

  it('a submit whose lookup missed the concurrent first one (it committed in between) is a replay', async () => {
    const s = await started();
    const first = await submit(s, { class: 'cifar10' }, 'raced');
    // As if the other request's insert landed after this one looked: the unique index must catch it.
    vi.spyOn(s.repo, 'jobByIdempotencyKey').mockReturnValueOnce(undefined);
    const second = await submit(s, { class: 'cifar10' }, 'raced');
    expect(second.status).toBe(201);
    expect(second.replayed).toBe('true');
    expect(second.body.id).toBe(first.body.id);
    expect(await jobCount(s)).toBe(1);
    // The failed insert left nothing behind: the next job is the next id, and the ledger still works.
    const next = await submit(s, { class: 'cifar10' });
    expect(next.body.id).toBe(first.body.id + 1);
  });

  it('a finished job is answered with its state, and nothing runs again', async () => {
    const s = await started();
    const first = await submit(s, { class: 'cifar10' }, 'done-once');
    await s.request('POST', `/v1/jobs/${first.body.id}/complete`);
    const again = await submit(s, { class: 'cifar10' }, 'done-once');
    expect(again.replayed).toBe('true');
    expect(again.body.job).toMatchObject({ id: first.body.id, state: 'done' });
    expect(await jobCount(s)).toBe(1);
    expect((await s.request('GET', '/v1/jobs?state=waiting,running')).body.jobs).toEqual([]);
  });

  it("an executed job's replay carries the token first given (derived again from its seed), still valid", async () => {
    const s = await started({ executor: idleExecutor });
    const body = { class: 'cifar10', workload: { command: ['node', 'train.js'] } };
    const first = await submit(s, body, 'exec-1');
    const again = await submit(s, body, 'exec-1');
    expect(again.replayed).toBe('true');
    expect(again.body).toMatchObject({ id: first.body.id, replayed: true, tokenReplaced: false });
    expect(again.body.token).toBe(first.body.token);
    const read = await s.request('GET', `/v1/jobs/${first.body.id}`, undefined, first.body.token);
    expect(read.status).toBe(200);
    expect(await jobCount(s)).toBe(1);
  });

  it('the OpenAPI document declares the header, the replay header and the 422', async () => {
    const s = await started();
    const op = (await s.request('GET', '/openapi.json', undefined, null)).body.paths['/v1/jobs'].post;
    expect(op.parameters).toContainEqual(
      expect.objectContaining({ name: 'idempotency-key', in: 'header', required: false }),
    );
    expect(op.responses['201'].headers).toHaveProperty('Idempotent-Replayed');
    expect(op.responses['422'].description).toMatch(/Idempotency-Key was used for a different request/);
  });

  it('keys survive a restart: a retry after one finds the stored job', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'boa-idem-'));
    cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    const before = await startService({ dataDir });
    const first = await submit(before, { class: 'cifar10' }, 'across-restart');
    await before.close();
    const after = await started({ dataDir });
    const again = await submit(after, { class: 'cifar10' }, 'across-restart');
    expect(again.replayed).toBe('true');
    expect(again.body.id).toBe(first.body.id);
    expect(await jobCount(after)).toBe(1);
  });
});
