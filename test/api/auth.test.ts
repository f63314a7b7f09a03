/**
 * Who may call what, as docs/api.md's table says and docs/security.md lists for job tokens, tried on
 * every route of the served OpenAPI document: with no token, a malformed Authorization header, the
 * job's own token, another job's token, and the operator token.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startService } from '../service/harness.ts';

type Booted = Awaited<ReturnType<typeof startService>>;
let boa: Booted | undefined;
afterEach(async () => {
  await boa?.close();
  boa = undefined;
});

const docs = (name: string) => readFileSync(resolve(import.meta.dirname, '../../docs', name), 'utf8');

interface Documented {
  method: string;
  path: string;
  who: string;
}

/**
 * The rows of api.md's call table: each backticked call names a method and a path (`/readyz` takes
 * the row's method before it, `.../cancel` the path before it too); query strings and bodies dropped.
 */
function documentedCalls(): Documented[] {
  const calls: Documented[] = [];
  for (const line of docs('api.md').split('\n')) {
    if (!line.startsWith('| `')) continue;
    const [call = '', who = ''] = line
      .split(/(?<!\\)\|/)
      .slice(1)
      .map((cell) => cell.trim());
    let method = '';
    let path = '';
    for (const [, code = ''] of call.matchAll(/`([^`]+)`/g)) {
      const full = /^(GET|POST|PUT|DELETE|PATCH) (\/\S*)/.exec(code);
      const relative = /^\.\.\.(\/\S+)/.exec(code);
      if (full) [method, path] = [full[1]!, full[2]!];
      else if (relative) path = path.replace(/\/[^/]+$/, relative[1]!);
      else if (code.startsWith('/') && method) path = code.split(' ')[0]!;
      else continue;
      path = path.replace(/\?.*$/, '');
      calls.push({ method, path, who });
    }
  }
  return calls;
}

/** The job routes docs/security.md says a job's own token may call. */
function securityJobRoutes(): string[] {
  const sentence = /may call only (.*?) of that job/s.exec(docs('security.md'))?.[1] ?? '';
  return [...sentence.matchAll(/`([^`]+)`/g)].map(([, p = '']) =>
    p.startsWith('/v1/') ? p : `/v1/jobs/{id}${p}`,
  );
}

async function call(b: Booted, method: string, path: string, authorization?: string) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (authorization !== undefined) headers.authorization = authorization;
  const body = method === 'GET' || method === 'DELETE' ? undefined : '{}';
  const res = await b.app.request(path, { method, headers, body });
  await res.arrayBuffer();
  return res.status;
}

describe('the auth column of docs/api.md', () => {
  it('names every route the service serves', async () => {
    boa = await startService();
    const served = (await boa.request('GET', '/openapi.json', undefined, null)).body as {
      paths: Record<string, Record<string, unknown>>;
    };
    const documented = new Set(documentedCalls().map((c) => `${c.method} ${c.path}`));
    const missing = Object.entries(served.paths)
      .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))
      .filter((route) => !documented.has(route));
    expect(missing).toEqual([]);
  });

  it('is what the service enforces, for no token, a malformed header, job tokens and the operator', async () => {
    boa = await startService();
    const own = (await boa.request('POST', '/v1/jobs', { class: 'cifar10' })).body as {
      id: number;
      token: string;
    };
    const other = (await boa.request('POST', '/v1/jobs', { class: 'cifar10' })).body as { token: string };
    const operator = `Bearer ${boa.token}`;
    const seen: string[] = [];
    const jobCallable: string[] = [];
    for (const { method, path: template, who } of documentedCalls()) {
      const path = template.replace('{id}', String(own.id)).replace('{name}', 'no-such-class');
      const open = /anyone/.test(who);
      const job = /\bjob\b/.test(who);
      const byOperator = open || /operator/.test(who);
      const route = `${method} ${template} (documented: ${who.slice(0, 40)})`;
      /** Whether the call was refused for its token (401), recorded for the failure message. */
      const refused = async (authorization: string | undefined) => {
        const status = await call(boa!, method, path, authorization);
        seen.push(`${route} as ${authorization?.slice(0, 12) ?? 'nobody'}: ${status}`);
        return status === 401;
      };
      for (const header of [undefined, 'Basic b3BlcmF0b3I6cHc=', 'Bearer', `Bearer ${own.token} x`]) {
        expect(await refused(header), `${route} with ${header ?? 'no header'}`).toBe(!open);
      }
      expect(await refused(`Bearer ${other.token}`), `${route}, another job's token`).toBe(!open);
      expect(await refused(`Bearer ${own.token}`), `${route}, the job's own token`).toBe(!(open || job));
      if (job) jobCallable.push(template);
      expect(await refused(operator), `${route}, the operator token`).toBe(!byOperator);
      if (!template.includes('{id}')) continue;
      // The same route for a job that does not exist: a wrong token is refused alike, so it cannot tell
      // which ids exist; the operator gets through to the route's own answer (404; 400 for the
      // empty body sent to progress, which is checked first).
      const missing = template.replace('{id}', String(own.id + 1000));
      const status = (authorization: string) => call(boa!, method, missing, authorization);
      for (const token of [other.token, own.token, 'not-a-token-0123456789']) {
        expect(await status(`Bearer ${token}`), `${route}, no such job, a wrong token`).toBe(401);
      }
      expect(await status(operator), `${route}, no such job, the operator token`).not.toBe(401);
    }
    expect(seen.length).toBeGreaterThan(100);
    expect(new Set(jobCallable)).toEqual(new Set(securityJobRoutes()));
  });

  it('a 401 says whether the header was missing or malformed, and never echoes what was sent', async () => {
    boa = await startService();
    const message = async (authorization?: string) => {
      const res = await boa!.app.request('/v1/budget', {
        headers: authorization === undefined ? {} : { authorization },
      });
      expect(res.status).toBe(401);
      return ((await res.json()) as { error: { message: string } }).error.message;
    };
    expect(await message()).toMatch(/^missing bearer token/);
    const secret = 'pasted-with-a-space 0123456789';
    for (const header of [`Basic ${secret}`, `Bearer ${secret}`, `Token ${secret}`, 'Bearer']) {
      const said = await message(header);
      expect(said, header).not.toMatch(/missing/);
      expect(said, header).toMatch(/Authorization header is not "Bearer <token>"/);
      expect(said, header).not.toContain('pasted');
    }
  });
});

describe('a job route refused', () => {
  it('names both job variables, in the same words whether the job exists or not', async () => {
    boa = await startService();
    const own = (await boa.request('POST', '/v1/jobs', { class: 'cifar10' })).body as { id: number };
    const said = async (id: number) => {
      const res = await boa!.request('GET', `/v1/jobs/${id}/allocation`, undefined, 'not-a-token-0123456789');
      expect(res.status).toBe(401);
      return (res.body as { error: { message: string } }).error.message;
    };
    const existing = await said(own.id);
    expect(existing).toMatch(/^wrong token: .*BOA_JOB_TOKEN and BOA_JOB_ID/);
    expect(existing).not.toContain('not-a-token');
    expect(await said(own.id + 1000)).toBe(existing.replace(`job ${own.id}`, `job ${own.id + 1000}`));
  });
});

describe('refused tokens in the log', () => {
  it('logs the first refusal at once and counts the rest a minute at a time, never the token', async () => {
    const lines: string[] = [];
    const { pino } = await import('pino');
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    boa = await startService({ logger });
    const refusals = () =>
      lines.map((line) => JSON.parse(line)).filter((entry) => entry.event === 'auth_refused');
    const guess = (token: string, path = '/v1/status') => boa!.request('GET', path, undefined, token);
    expect((await guess('guess-0001')).status).toBe(401);
    expect(refusals()).toEqual([expect.objectContaining({ refused: 1, lastPath: '/v1/status' })]);
    for (let i = 2; i <= 30; i++) await guess(`guess-${String(i).padStart(4, '0')}`, '/v1/jobs/1');
    expect((await boa.request('GET', '/metrics', undefined, 'guess-metrics')).status).toBe(401);
    expect(refusals()).toHaveLength(1);
    boa.clock.advance(61);
    await guess('guess-last');
    expect(refusals().at(-1)).toMatchObject({ refused: 31, lastPath: '/v1/status' });
    expect(lines.join('\n')).not.toMatch(/guess-/);
  });
});
