/**
 * /openapi.json describes every route the service serves but those docs/api.md says it leaves out
 * (found in a newcomer trial: /metrics, /healthz, /readyz and / were served but not in the document,
 * while the docs said it covered every route).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LivenessView, ReadinessView } from '../../src/api/unversioned-docs.ts';
import { startService } from '../service/harness.ts';

type Booted = Awaited<ReturnType<typeof startService>>;
let boa: Booted | undefined;
afterEach(async () => {
  await boa?.close();
  boa = undefined;
});

/** Hono's `:id` as OpenAPI's `{id}`. */
const asOpenApi = (path: string) => path.replace(/:([A-Za-z]+)/g, '{$1}');

/** Left out, as docs/api.md says: the page's own scripts (static files) and the document itself. */
const leftOut = (path: string) => path.startsWith('/dashboard/') || path === '/openapi.json';

describe('/openapi.json', () => {
  it('has every route the service serves, with its method', async () => {
    boa = await startService();
    const doc = (await boa.request('GET', '/openapi.json', undefined, null)).body as {
      paths: Record<string, Record<string, unknown>>;
    };
    // Handlers only: middleware (`use`) is registered as method ALL.
    const served = boa.app.routes
      .filter((r) => r.method !== 'ALL' && !leftOut(r.path))
      .map((r) => `${r.method} ${asOpenApi(r.path)}`);
    expect(served).toEqual(expect.arrayContaining(['GET /', 'GET /healthz', 'GET /readyz', 'GET /metrics']));
    const documented = new Set(
      Object.entries(doc.paths).flatMap(([path, ops]) =>
        Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
      ),
    );
    expect([...new Set(served)].filter((route) => !documented.has(route))).toEqual([]);
  });

  it('says what the probes, the metrics and the page answer, and that they need no token but /metrics', async () => {
    boa = await startService();
    const doc = (await boa.request('GET', '/openapi.json', undefined, null)).body;
    const op = (path: string) => doc.paths[path].get;
    expect(Object.keys(op('/metrics').responses['200'].content)).toEqual(['text/plain']);
    expect(op('/metrics').security).toBeUndefined();
    expect(Object.keys(op('/').responses['200'].content)).toEqual(['text/html']);
    for (const path of ['/', '/healthz', '/readyz']) expect(op(path).security, path).toEqual([]);
    expect(Object.keys(op('/healthz').responses)).toEqual(['200', '503']);
    expect(Object.keys(op('/readyz').responses)).toEqual(['200', '503']);
    // The probes' bodies are what the document says, before the first tick (503) and after it (200).
    for (const ticks of [0, 1]) {
      await boa.ticks(ticks);
      const ready = await boa.request('GET', '/readyz', undefined, null);
      expect(ready.status).toBe(ticks ? 200 : 503);
      expect(ReadinessView.strict().parse(ready.body)).toEqual(ready.body);
      expect(
        LivenessView.strict().parse((await boa.request('GET', '/healthz', undefined, null)).body),
      ).toEqual({
        ok: true,
      });
    }
  });
});
