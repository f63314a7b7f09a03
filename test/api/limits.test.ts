/**
 * Body limits and token checks happen before any handler reads a body: a wrong job token is refused
 * without pulling a single chunk, a body over the route's limit is refused with 413, and a near miss
 * on a job route (a trailing slash) is a 404, not a token error.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { BOUNDS } from '../../src/api/bounds.ts';
import { DEFAULT_BODY_LIMIT, HISTORY_BODY_LIMIT } from '../../src/api/limits.ts';
import { ManualClock, startService } from '../service/harness.ts';

type Booted = Awaited<ReturnType<typeof startService>>;
let boa: Booted | undefined;
afterEach(async () => {
  await boa?.close();
  boa = undefined;
});

/** A request body that counts how many chunks the server pulled from it. */
function countingBody(chunks: number, chunk = new Uint8Array(16 * 1024).fill(32)) {
  const counter = { pulled: 0 };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (counter.pulled >= chunks) return controller.close();
      counter.pulled++;
      controller.enqueue(chunk);
    },
  });
  return { stream, counter };
}

async function post(b: Booted, path: string, token: string, body: RequestInit['body'], method = 'POST') {
  const res = await b.app.request(path, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body,
    duplex: 'half',
  } as RequestInit);
  return { status: res.status, body: (await res.json()) as { error?: { code: string } } };
}

describe('before the body is read', () => {
  it('a wrong job token is 401 and not one chunk of the body is pulled', async () => {
    boa = await startService();
    const { body: job } = await boa.request('POST', '/v1/jobs', { class: 'cifar10' });
    const { stream, counter } = countingBody(1000);
    const res = await post(boa, `/v1/jobs/${job.id}/progress`, 'not-the-job-token', stream);
    expect(res.status).toBe(401);
    expect(counter.pulled).toBeLessThanOrEqual(1); // a stream may be primed with one chunk, never read on
    const other = await boa.request('POST', '/v1/jobs', { class: 'cifar10' });
    const crossed = await post(boa, `/v1/jobs/${job.id}/progress`, other.body.token, '{"statEpoch":0}');
    expect(crossed.status).toBe(401);
    // No such job: the same 401 (a wrong token cannot probe ids); the operator gets the route's 404.
    const unknown = await post(boa, '/v1/jobs/999/progress', 'whatever', '{"statEpoch":0}');
    expect(unknown.status).toBe(401);
    const byOperator = await post(boa, '/v1/jobs/999/progress', boa.token, '{"statEpoch":0}');
    expect(byOperator.status).toBe(404);
    const right = await post(boa, `/v1/jobs/${job.id}/progress`, job.token, '{"statEpoch":0}');
    expect(right.status).toBe(200);
  });

  it('a trailing slash on a job route is 404, whatever the token', async () => {
    boa = await startService();
    const { body: job } = await boa.request('POST', '/v1/jobs', { class: 'cifar10' });
    for (const token of [job.token, 'anything', boa.token]) {
      const res = await post(boa, `/v1/jobs/${job.id}/progress/`, token, '{"statEpoch":0}');
      expect(res.status, token).toBe(404);
      expect(res.body.error?.code).toBe('not_found');
    }
    const get = await boa.request('GET', `/v1/jobs/${job.id}/`, undefined, job.token);
    expect(get.status).toBe(404);
  });

  it('a streamed body over the limit is 413 after at most the limit is read', async () => {
    boa = await startService();
    const { stream, counter } = countingBody(10_000);
    const res = await post(boa, '/v1/jobs', boa.token, stream);
    expect(res.status).toBe(413);
    expect(res.body.error?.code).toBe('payload_too_large');
    expect(counter.pulled * 16 * 1024).toBeLessThanOrEqual(DEFAULT_BODY_LIMIT + 2 * 16 * 1024);
  });

  it('every route with a body has a limit: 64 KiB by default, 1 MiB for class profiles', async () => {
    boa = await startService();
    const padded = (bytes: number) => `{"gpuHoursPerHour":40${' '.repeat(bytes)}}`;
    expect((await post(boa, '/v1/budget', boa.token, padded(DEFAULT_BODY_LIMIT), 'PUT')).status).toBe(413);
    expect((await post(boa, '/v1/budget', boa.token, padded(1000), 'PUT')).status).not.toBe(413);
    const profile = {
      name: 'tiny',
      rescaleSeconds: 30,
      epochs: [{ workSeconds: 100, speedup: { 1: 1, 2: 1.9 } }],
    };
    const big = `{"profile":${JSON.stringify(profile)}${' '.repeat(200_000)}}`;
    const saved = await post(boa, `/v1/classes/${profile.name}`, boa.token, big, 'PUT');
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    const huge = `{"profile":${JSON.stringify(profile)}${' '.repeat(1024 * 1024)}}`;
    expect((await post(boa, `/v1/classes/${profile.name}`, boa.token, huge, 'PUT')).status).toBe(413);
    expect((await post(boa, '/v1/classes/validate', boa.token, huge)).status).toBe(413);
  });
});

describe('a history import at its largest', () => {
  const T0 = Date.UTC(2026, 10, 1);
  const name = `c${'x'.repeat(63)}`; // 64 characters: the longest valid class name
  // One every 15 s over the 42 hours before the record: all within the estimator's 48 hours.
  const times = Array.from({ length: BOUNDS.historyArrivals }, (_, k) => T0 - 60_000 - k * 15_000);
  /** The same instant at its longest ISO form: to the nanosecond, at +05:30. */
  const longIso = (ms: number) => `${new Date(ms + 5.5 * 3_600_000).toISOString().slice(0, 23)}000000+05:30`;

  it('takes the most arrivals the schema allows with the longest class name, in ms or ISO times', async () => {
    boa = await startService({ clock: new ManualClock(T0) });
    const profile = {
      name,
      rescaleSeconds: 30,
      epochs: [{ workSeconds: 3600, speedup: { 1: 1, 2: 1.8 } }],
    };
    expect((await boa.request('PUT', `/v1/classes/${name}`, { profile })).status).toBe(200);
    expect(longIso(times[0]!)).toHaveLength(35);
    const ms = JSON.stringify({
      source: 'jobs.csv',
      arrivals: times.map((t) => ({ className: name, submittedAt: t })),
    });
    const iso = JSON.stringify({
      source: 'jobs.csv',
      arrivals: times.map((t) => ({ className: name, submittedAt: longIso(t) })),
    });
    // As Python's json.dumps writes it: a space after every colon and comma.
    const spaced = iso.replaceAll('":"', '": "').replaceAll('","', '", "').replaceAll('},{', '}, {');
    expect(ms.length).toBeGreaterThan(1024 * 1024); // over the limit this route had
    const first = await post(boa, '/v1/history', boa.token, ms);
    expect(first.status, JSON.stringify(first.body).slice(0, 300)).toBe(200);
    for (const body of [iso, spaced]) {
      // The same instants: the import made from the ms body.
      const again = await post(boa, '/v1/history', boa.token, body);
      expect(again.status, JSON.stringify(again.body).slice(0, 300)).toBe(200);
      expect(again.body).toMatchObject({ alreadyImported: true });
    }
    expect(spaced.length).toBeLessThanOrEqual(HISTORY_BODY_LIMIT);
    const over = `${ms.slice(0, -1)}${' '.repeat(HISTORY_BODY_LIMIT - ms.length + 1)}}`;
    expect((await post(boa, '/v1/history', boa.token, over)).status).toBe(413);
  });

  it('refuses an ISO time longer than the bound, naming it', async () => {
    boa = await startService({ clock: new ManualClock(T0) });
    // Ten decimals of a second at +00:00: 36 characters, one over.
    const submittedAt = `${new Date(T0 - 3_600_000).toISOString().slice(0, 23)}0000000+00:00`;
    const res = await boa.request('POST', '/v1/history', {
      arrivals: [{ className: 'cifar10', submittedAt }],
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ field: 'arrivals.0.submittedAt' });
    expect(res.body.error.message).toMatch('at most 35 characters');
  });
});
