/**
 * Upper bounds on what a caller can send, printable names, and deleting a class: each refusal is a
 * 400 naming the field, and nothing stored changes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { BOUNDS } from '../../src/api/bounds.ts';
import { startService } from '../service/harness.ts';

type Booted = Awaited<ReturnType<typeof startService>>;
let boa: Booted | undefined;
afterEach(async () => {
  await boa?.close();
  boa = undefined;
});

const tiny = (workSeconds = 100) => ({
  name: 'tiny',
  rescaleSeconds: 30,
  epochs: [{ workSeconds, speedup: { 1: 1, 2: 1.9 } }],
});

describe('bounds', () => {
  it('refuses a budget of 1e308 or 1e12 and keeps the stored one', async () => {
    boa = await startService();
    expect((await boa.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 })).status).toBe(200);
    for (const gpuHoursPerHour of [1e308, 1e12, BOUNDS.budget + 1]) {
      const res = await boa.request('PUT', '/v1/budget', { gpuHoursPerHour });
      expect(res.status).toBe(400);
      expect(res.body.error.field).toBe('gpuHoursPerHour');
      expect(res.body.error.message).toContain(`at most ${BOUNDS.budget}`);
    }
    expect((await boa.request('GET', '/v1/budget')).body.gpuHoursPerHour).toBe(40);
  });

  it('refuses a class whose work would make every budget infeasible, and a huge prior rate', async () => {
    boa = await startService();
    const huge = await boa.request('PUT', '/v1/classes/tiny', { profile: tiny(1e300) });
    expect(huge.status).toBe(400);
    expect(huge.body.error.message).toMatch(/workSeconds is at most/);
    const rate = await boa.request('PUT', '/v1/classes/tiny', { profile: tiny(), priorRatePerHour: 1e12 });
    expect(rate.status).toBe(400);
    expect(rate.body.error.field).toBe('priorRatePerHour');
    const classes = (await boa.request('GET', '/v1/classes')).body.classes.map(
      (c: { name: string }) => c.name,
    );
    expect(classes).not.toContain('tiny');
  });

  it('refuses job names with control characters (NUL, newline, ESC) and overlong ones', async () => {
    boa = await startService();
    const separators = ['line\u2028separator', 'paragraph\u2029separator'];
    for (const name of [
      'a\u0000b',
      'two\nlines',
      '\u001b[31mred',
      'bidi\u202eevil',
      'x'.repeat(201),
      ...separators,
    ]) {
      const res = await boa.request('POST', '/v1/jobs', { class: 'cifar10', name });
      expect(res.status, JSON.stringify(name)).toBe(400);
      expect(res.body.error.field).toBe('name');
    }
    for (const cls of ['cifar10\n', '../etc', '']) {
      expect((await boa.request('POST', '/v1/jobs', { class: cls })).status).toBe(400);
    }
    expect((await boa.request('GET', '/v1/jobs')).body.jobs).toHaveLength(0);
    const ok = await boa.request('POST', '/v1/jobs', { class: 'cifar10', name: 'résnet 18 · lr=0.1' });
    expect(ok.status).toBe(201);
  });

  it('refuses progress beyond the bounds', async () => {
    boa = await startService();
    const { body: job } = await boa.request('POST', '/v1/jobs', { class: 'cifar10' });
    const epoch = await boa.request('POST', `/v1/jobs/${job.id}/progress`, { statEpoch: 1e9 }, job.token);
    expect(epoch.status).toBe(400);
    const work = await boa.request(
      'POST',
      `/v1/jobs/${job.id}/progress`,
      { statEpoch: 0, workDoneSeconds: 1e300 },
      job.token,
    );
    expect(work.status).toBe(400);
    expect(work.body.error.field).toBe('workDoneSeconds');
  });

  it('states the bounds in the OpenAPI document', async () => {
    boa = await startService();
    const doc = (await boa.request('GET', '/openapi.json')).body;
    const schemas = doc.components.schemas;
    expect(schemas.Budget.properties.gpuHoursPerHour.maximum).toBe(BOUNDS.budget);
    expect(schemas.RegisterJob.properties.name.maxLength).toBe(BOUNDS.jobName);
    expect(schemas.RegisterJob.properties.name.pattern).toBeDefined();
    expect(schemas.Progress.properties.workDoneSeconds.maximum).toBe(BOUNDS.workSeconds);
    expect(doc.paths['/v1/classes/{name}'].delete).toBeDefined();
  });
});

describe('query parameters', () => {
  it('refuses one a route does not take, naming those it does, instead of ignoring it', async () => {
    boa = await startService();
    const typo = await boa.request('GET', '/v1/jobs?states=running');
    expect(typo.status).toBe(400);
    expect(typo.body.error).toMatchObject({ code: 'invalid', field: 'states' });
    expect(typo.body.error.message).toBe(
      'unknown query parameter "states"; the parameters are state, class, name, limit, before, order, stopping',
    );
    expect((await boa.request('GET', '/v1/ledger?hour=1')).body.error.message).toMatch(
      /^unknown query parameter "hour"; the parameters are /,
    );
    expect((await boa.request('GET', '/v1/jobs?state=running')).status).toBe(200);
  });
});

// 60 epochs x 1,000 widths: 60,000 entries each, within the body limit.
const wide = (name: string) => ({
  name,
  rescaleSeconds: 30,
  epochs: Array.from({ length: 60 }, () => ({
    workSeconds: 100,
    speedup: Object.fromEntries(
      Array.from({ length: 1000 }, (_, i) => [String(i + 1), Math.round((i + 1) ** 0.5 * 100) / 100]),
    ),
  })),
});

describe('PUT /v1/classes/{name}', () => {
  it('refuses a class that would take the speedup tables past their bound, storing nothing', async () => {
    boa = await startService();
    const before = (await boa.request('GET', '/v1/classes')).body.classes.length;
    for (const name of ['w1', 'w2', 'w3'])
      expect((await boa.request('PUT', `/v1/classes/${name}`, { profile: wide(name) })).status).toBe(200);
    const refused = await boa.request('PUT', '/v1/classes/w4', { profile: wide('w4') });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({ code: 'profiles_too_large', field: 'profile' });
    expect(refused.body.error.message).toMatch(/would hold \d+ entries .* at most 200000/);
    expect((await boa.request('GET', '/v1/classes')).body.classes).toHaveLength(before + 3);
    // Replacing one of them with as large a profile is within the bound: its old table goes.
    expect((await boa.request('PUT', '/v1/classes/w3', { profile: wide('w3') })).status).toBe(200);
  });
});

describe('POST /v1/classes/validate', () => {
  // Found in review: a class the put refuses for the bound was answered valid.
  it('refuses, as the put would, a class the stored ones leave no room for', async () => {
    boa = await startService();
    for (const name of ['w1', 'w2', 'w3'])
      expect((await boa.request('PUT', `/v1/classes/${name}`, { profile: wide(name) })).status).toBe(200);
    const refused = await boa.request('POST', '/v1/classes/validate', { profile: wide('w4') });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({ code: 'profiles_too_large', field: 'profile' });
    expect(refused.body.error.message).toMatch(/^with class w4 \(60000 speedup entries\), .* at most 200000/);
    // Replacing a stored one with as large a profile fits, as its put does.
    expect((await boa.request('POST', '/v1/classes/validate', { profile: wide('w3') })).body).toMatchObject({
      valid: true,
      name: 'w3',
    });
  });
});

describe('DELETE /v1/classes/{name}', () => {
  it('is refused while a job of the class is active, then deletes it', async () => {
    boa = await startService();
    expect((await boa.request('PUT', '/v1/classes/tiny', { profile: tiny() })).status).toBe(200);
    const { body: job } = await boa.request('POST', '/v1/jobs', { class: 'tiny' });
    const busy = await boa.request('DELETE', '/v1/classes/tiny');
    expect(busy.status).toBe(409);
    expect(busy.body.error.code).toBe('class_in_use');
    expect(busy.body.error.message).toContain(String(job.id));
    expect((await boa.request('POST', `/v1/jobs/${job.id}/cancel`)).status).toBe(200);
    const gone = await boa.request('DELETE', '/v1/classes/tiny');
    expect(gone.status).toBe(200);
    const names = (await boa.request('GET', '/v1/classes')).body.classes.map((c: { name: string }) => c.name);
    expect(names).not.toContain('tiny');
    expect(boa.repo.listClasses().map((c) => c.name)).not.toContain('tiny');
    expect((await boa.request('POST', '/v1/jobs', { class: 'tiny' })).status).toBe(400);
    expect((await boa.request('DELETE', '/v1/classes/tiny')).status).toBe(404);
    expect((await boa.request('DELETE', '/v1/classes/a%0Ab')).status).toBe(400);
  });

  it('needs the operator token', async () => {
    boa = await startService();
    const { body: job } = await boa.request('POST', '/v1/jobs', { class: 'cifar10' });
    expect((await boa.request('DELETE', '/v1/classes/ncf', undefined, job.token)).status).toBe(401);
    expect(boa.repo.listClasses().map((c) => c.name)).toContain('ncf');
  });
});
