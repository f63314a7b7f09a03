/**
 * `GET /v1/jobs` filters: several states at once (the active jobs are waiting,running), a class, an
 * exact name; combined, they all hold; the newest `limit` of the matches, oldest first, or with order=ended
 * the `limit` that ended last, newest first.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startService } from '../service/harness.ts';

type Booted = Awaited<ReturnType<typeof startService>>;
let boa: Booted | undefined;
afterEach(async () => {
  await boa?.close();
  boa = undefined;
});

async function submit(s: Booted, className: string, name: string): Promise<number> {
  const res = await s.request('POST', '/v1/jobs', { class: className, name });
  expect(res.status).toBe(201);
  return res.body.id;
}

const ids = (body: { jobs: Array<{ id: number }> }) => body.jobs.map((j) => j.id);

describe('GET /v1/jobs filters', () => {
  it('keeps jobs in any of several states, of a class, of an exact name', async () => {
    const s = (boa = await startService());
    const a = await submit(s, 'cifar10', 'sweep');
    const b = await submit(s, 'bert', 'sweep');
    const c = await submit(s, 'cifar10', 'sweep-2');
    const d = await submit(s, 'cifar10', 'other');
    expect((await s.request('POST', `/v1/jobs/${d}/cancel`)).status).toBe(200);

    const active = await s.request('GET', '/v1/jobs?state=waiting,running');
    expect(ids(active.body)).toEqual([a, b, c]);
    expect(ids((await s.request('GET', '/v1/jobs?state=cancelled,done')).body)).toEqual([d]);
    expect(ids((await s.request('GET', '/v1/jobs?class=cifar10')).body)).toEqual([a, c, d]);
    // Exact: "sweep" is not a prefix match for "sweep-2".
    expect(ids((await s.request('GET', '/v1/jobs?name=sweep')).body)).toEqual([a, b]);
    expect(ids((await s.request('GET', '/v1/jobs?name=sweep&class=cifar10')).body)).toEqual([a]);
    expect(ids((await s.request('GET', '/v1/jobs?class=cifar10&state=waiting&limit=1')).body)).toEqual([c]);
    expect((await s.request('GET', '/v1/jobs?class=imagenet')).body.jobs).toEqual([]);
  });

  it('with order=ended, lists the jobs that ended last, newest first, whenever they were submitted', async () => {
    const s = (boa = await startService());
    const long = await submit(s, 'cifar10', 'three-day');
    const later: number[] = [];
    for (const name of ['b', 'c', 'd']) later.push(await submit(s, 'cifar10', name));
    const open = await submit(s, 'cifar10', 'still-waiting');
    // The jobs submitted after it fail first, the long one last (found in review: the dashboard's
    // "newest failed" were the newest submitted, so the long one was left off).
    for (const id of [...later, long]) {
      s.clock.advance(60);
      s.service.finishJob(id, 'failed', undefined, { exitCode: 1, reason: 'rank 0 exited 1' });
    }
    const ended = await s.request('GET', '/v1/jobs?state=failed&order=ended&limit=2');
    expect(ids(ended.body)).toEqual([long, later[2]]);
    // Jobs not ended come after those that did.
    expect(ids((await s.request('GET', '/v1/jobs?order=ended')).body)).toEqual([
      long,
      ...[...later].reverse(),
      open,
    ]);
    // A page by id in that order would skip jobs: refused, naming the field.
    const paged = await s.request('GET', `/v1/jobs?order=ended&before=${later[1]}`);
    expect(paged.status).toBe(400);
    expect(paged.body.error).toMatchObject({ code: 'invalid', field: 'before' });
    expect(paged.body.error.message).toContain('cannot be given with order=ended');
    // The default is unchanged: the newest submitted, oldest first.
    expect(ids((await s.request('GET', '/v1/jobs?state=failed&limit=2')).body)).toEqual([later[1], later[2]]);
  });

  it('refuses a malformed class or an empty name, naming the field', async () => {
    const s = (boa = await startService());
    const badClass = await s.request('GET', '/v1/jobs?class=no%20such');
    expect(badClass.status).toBe(400);
    expect(badClass.body.error.field).toBe('class');
    // Well formed but no class boa knows, and no job of it: a typo, not an empty list.
    const unknown = await s.request('GET', '/v1/jobs?class=cifar11');
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ code: 'unknown_class', field: 'class' });
    expect(unknown.body.error.message).toMatch(/^unknown class "cifar11"; known classes: .*cifar10/);
    // A deleted class's jobs still list, whatever the other filters leave.
    const tiny = {
      name: 'tiny',
      weight: 1,
      rescaleSeconds: 1,
      epochs: [{ workSeconds: 100, speedup: { '1': 1 } }],
    };
    expect((await s.request('PUT', '/v1/classes/tiny', { profile: tiny })).status).toBe(200);
    const job = (await s.request('POST', '/v1/jobs', { class: 'tiny' })).body.id;
    expect((await s.request('POST', `/v1/jobs/${job}/cancel`)).status).toBe(200);
    expect((await s.request('DELETE', '/v1/classes/tiny')).status).toBeLessThan(300);
    const gone = await s.request('GET', '/v1/jobs?class=tiny&state=running');
    expect([gone.status, gone.body.jobs]).toEqual([200, []]);
    expect((await s.request('GET', '/v1/jobs?class=tiny')).body.jobs).toHaveLength(1);
    const emptyName = await s.request('GET', '/v1/jobs?name=');
    expect(emptyName.status).toBe(400);
    expect(emptyName.body.error.field).toBe('name');
  });
});
