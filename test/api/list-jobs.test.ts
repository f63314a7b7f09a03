/**
 * `GET /v1/jobs` filters: several states at once (the active jobs are waiting,running), a class, an
 * exact name; combined, they all hold; the newest `limit` of the matches, oldest first.
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
