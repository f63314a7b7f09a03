/**
 * A poll whose lease renewal the store refuses (a failing disk) is answered 503 and changes nothing in
 * memory either: the next poll writes the renewal again. Before, memory took the new last-seen time
 * before the write, so the next polls (for a tenth of the lease) took it as written and wrote nothing,
 * and the store's lastSeenAt stayed behind what memory said it held. A progress report whose renewal
 * fails is stored and answered 200: it was a 503 for a report taken, which the client then sent again.
 */
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { startService } from './harness.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

type Service = Awaited<ReturnType<typeof startService>>;

/** The store's next lease renewal fails as a failing disk's write does; says whether it has. */
function failNextRenewal(s: Service): () => boolean {
  const touchJob = s.repo.touchJob.bind(s.repo);
  let failed = false;
  s.repo.touchJob = (id, at) => {
    if (failed) return touchJob(id, at);
    failed = true;
    throw new Database.SqliteError('disk I/O error', 'SQLITE_IOERR_WRITE');
  };
  return () => failed;
}

describe('a lease renewal the store refuses', () => {
  it('leaves the last-seen time as stored, and the next poll renews it', async () => {
    const s = await startService({ config: { leaseSeconds: 300 } });
    cleanups.push(s.close);
    const { job, token } = s.service.registerJob('cifar10', 'a');
    const poll = () => s.request('GET', `/v1/jobs/${job.id}/allocation`, undefined, token);
    expect((await poll()).status).toBe(200);
    const stored = () => s.repo.getJob(job.id)?.lastSeenAt;
    const seenBefore = s.service.leases.lastSeen(job);
    expect(stored()).toBe(job.lastSeenAt);

    // Past a tenth of the lease, so the next poll writes its renewal; the disk fails that write once.
    s.clock.advance(60);
    failNextRenewal(s);
    const refused = await poll();
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe('store_io_error');
    expect(job.lastSeenAt).toBe(stored());
    expect(s.service.leases.lastSeen(job)).toBe(seenBefore);

    expect((await poll()).status).toBe(200);
    expect(stored()).toBe(s.clock.now());
    expect(job.lastSeenAt).toBe(stored());
  });
});

describe('a progress report whose lease renewal the store refuses', () => {
  it('is taken and answered as taken; the next poll renews the lease', async () => {
    const s = await startService({ config: { leaseSeconds: 300 } });
    cleanups.push(s.close);
    const { job, token } = s.service.registerJob('cifar10', 'a');
    expect((await s.request('GET', `/v1/jobs/${job.id}/allocation`, undefined, token)).status).toBe(200);
    s.clock.advance(60);
    const failed = failNextRenewal(s);
    const report = await s.request('POST', `/v1/jobs/${job.id}/progress`, { statEpoch: 1 }, token);
    // Answered 503 before, though the report was stored: the client sent it again.
    expect(report.status).toBe(200);
    expect(failed()).toBe(true);
    expect(s.repo.getJob(job.id)?.statEpoch).toBe(1);
    expect(s.repo.getJob(job.id)?.lastSeenAt).toBe(job.lastSeenAt);
    expect(job.lastSeenAt).toBeLessThan(s.clock.now());

    expect((await s.request('GET', `/v1/jobs/${job.id}/allocation`, undefined, token)).status).toBe(200);
    expect(s.repo.getJob(job.id)?.lastSeenAt).toBe(s.clock.now());
  });
});

describe('a replayed submission whose lease renewal the store refuses', () => {
  it('answers with the new token, which works', async () => {
    const s = await startService({ config: { leaseSeconds: 300 } });
    cleanups.push(s.close);
    const submit = () =>
      s.app.request('/v1/jobs', {
        method: 'POST',
        headers: {
          authorization: `Bearer ${s.token}`,
          'content-type': 'application/json',
          'idempotency-key': 'k-1',
        },
        body: JSON.stringify({ class: 'cifar10', name: 'r' }),
      });
    const first = await submit();
    expect(first.status).toBe(201);
    s.clock.advance(60);
    const failed = failNextRenewal(s);
    // The replay stores a new token: answered 503 before, no one had the token the job then held.
    const replay = await submit();
    expect(failed()).toBe(true);
    expect(replay.status).toBe(201);
    const { id, token } = (await replay.json()) as { id: number; token: string };
    expect((await s.request('GET', `/v1/jobs/${id}/allocation`, undefined, token)).status).toBe(200);
    expect(s.repo.getJob(id)?.lastSeenAt).toBe(s.clock.now());
  });
});
