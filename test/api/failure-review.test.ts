/**
 * A failure-mode review of the API and the store, against their promises: bad input gets a clear error
 * naming what is wrong and what is allowed; nothing stored is lost; state changes are transactional (a
 * write the store refuses leaves memory as the store holds it, so the service answers after it as it
 * will after a restart). Each test states one promise; those that once broke name the fix.
 */
import { afterEach, describe, expect, it } from 'vitest';
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
    expect(failed.status).toBe(500);
    expect((await poll(first.body.token)).status).toBe(200);

    const again = await submit(s, { class: 'cifar10', name: 'r' }, 'k-1');
    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({ id: first.body.id, replayed: true, tokenReplaced: true });
    expect((await poll(again.body.token)).status).toBe(200);
    expect((await poll(first.body.token)).status).toBe(401);
    expect((await s.request('GET', '/v1/jobs')).body.jobs).toHaveLength(1);
  });
});
