/**
 * Every /v1 route refuses a query parameter it does not take and a body when it takes none, naming
 * what it does take (found in a trial: only five routes refused an unknown parameter; the others, and
 * every route without a body, ignored what they were sent).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startService } from '../service/harness.ts';

type Booted = Awaited<ReturnType<typeof startService>>;
let boa: Booted | undefined;
afterEach(async () => {
  await boa?.close();
  boa = undefined;
});

/** A request with the headers and body as given (the harness's request sets them from the body). */
async function raw(method: string, path: string, init: { body?: string; headers?: Record<string, string> }) {
  const res = await boa!.app.request(path, {
    method,
    headers: { authorization: `Bearer ${boa!.token}`, ...init.headers },
    body: init.body,
  });
  return { status: res.status, body: (await res.json()) as any };
}

describe('query parameters a route does not take', () => {
  it.each([
    ['GET', '/v1/jobs/{id}?follow=true', 'follow', 'GET /v1/jobs/{id}'],
    ['GET', '/v1/jobs/{id}/allocation?x=1', 'x', 'GET /v1/jobs/{id}/allocation'],
    ['GET', '/v1/plan?class=bert', 'class', 'GET /v1/plan'],
    ['GET', '/v1/status?x=1', 'x', 'GET /v1/status'],
    ['GET', '/v1/budget?x=1', 'x', 'GET /v1/budget'],
    ['GET', '/v1/classes?x=1', 'x', 'GET /v1/classes'],
    ['GET', '/v1/history?x=1', 'x', 'GET /v1/history'],
    ['GET', '/v1/history/arrivals?since=2026-01-01T00:00:00Z', 'since', 'GET /v1/history/arrivals'],
    ['POST', '/v1/plan/recompute?force=1', 'force', 'POST /v1/plan/recompute'],
    ['POST', '/v1/jobs/{id}/cancel?x=1', 'x', 'POST /v1/jobs/{id}/cancel'],
  ])('%s %s: 400 naming it, and that the route takes none', async (method, path, name, route) => {
    boa = await startService();
    const id = (await boa.request('POST', '/v1/jobs', { class: 'cifar10' })).body.id;
    const res = await boa.request(method, path.replace('{id}', String(id)));
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      code: 'invalid',
      field: name,
      message: `unknown query parameter "${name}"; ${route} takes no query parameters`,
    });
    expect((await boa.request('GET', `/v1/jobs/${id}`)).body.state).toBe('waiting');
  });

  it('names the parameters a route takes, as the strict query schemas did', async () => {
    boa = await startService();
    const res = await boa.request('GET', '/v1/frontier?fromat=svg');
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe('unknown query parameter "fromat"; the parameters are format');
    expect((await boa.request('GET', '/v1/frontier?format=json')).status).toBe(200);
  });
});

describe('a body on a route that takes none', () => {
  it.each([
    ['POST', '/v1/jobs/{id}/cancel', 'garbage', 'text/plain'],
    ['POST', '/v1/jobs/{id}/cancel', '{"reason":"x"}', 'application/json'],
    ['POST', '/v1/plan/recompute', '{"x":1}', 'application/json'],
    ['DELETE', '/v1/classes/bert', '{"force":true}', 'application/json'],
  ])('%s %s with %s is refused (400), nothing changed', async (method, path, body, type) => {
    boa = await startService();
    const id = (await boa.request('POST', '/v1/jobs', { class: 'cifar10' })).body.id;
    const res = await raw(method, path.replace('{id}', String(id)), {
      body,
      headers: { 'content-type': type },
    });
    expect(res.status).toBe(400);
    const route = `${method} ${path.replace(/\/bert$/, '/{name}')}`;
    expect(res.body.error).toEqual({
      code: 'invalid',
      message: `${route} takes no body (got ${body.length} bytes): send none, or {}`,
    });
    expect((await boa.request('GET', `/v1/jobs/${id}`)).body.state).toBe('waiting');
    expect((await boa.request('GET', '/v1/classes')).body.classes.map((c: any) => c.name)).toContain('bert');
  });

  it('takes none, or an empty one (Content-Length: 0, as Python urllib sends on a POST without data)', async () => {
    boa = await startService();
    const a = (await boa.request('POST', '/v1/jobs', { class: 'cifar10' })).body.id;
    const b = (await boa.request('POST', '/v1/jobs', { class: 'cifar10' })).body.id;
    expect((await raw('POST', `/v1/jobs/${a}/cancel`, {})).status).toBe(200);
    const empty = await raw('POST', `/v1/jobs/${b}/cancel`, {
      body: '',
      headers: { 'content-type': 'application/json', 'content-length': '0' },
    });
    expect(empty.status).toBe(200);
    expect(empty.body.state).toBe('cancelled');
  });

  it('takes {} as none: a hand-written client posting json={} to /complete still completes (found in review)', async () => {
    boa = await startService();
    const id = (await boa.request('POST', '/v1/jobs', { class: 'cifar10' })).body.id;
    const res = await raw('POST', `/v1/jobs/${id}/cancel`, {
      body: ' {} ',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(200);
    expect(res.body.state).toBe('cancelled');
  });
});
