import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import type { ApiEnv } from './env.ts';
import { errorBody } from './errors.ts';

/** What one documented route takes: its query parameters (undefined: its schema decides) and a body or not. */
interface RouteInput {
  readonly method: string;
  /** As documented, e.g. `/v1/jobs/{id}`, for messages. */
  readonly path: string;
  readonly pattern: RegExp;
  readonly query: readonly string[] | undefined;
  readonly body: boolean;
}

/**
 * Every /v1 route refuses what it does not take, read from the routes' own OpenAPI definitions so a
 * new route cannot forget to: a query parameter it does not declare (`GET /v1/jobs/81?follow=true`
 * answered the job as if nothing had been asked, and `/v1/history/arrivals?since=...` every arrival:
 * only the five routes with a strict query schema refused one; found in a trial), and a body on a
 * route that takes none (`POST /v1/jobs/1/cancel` with `garbage` as text/plain cancelled the job). A
 * body of 0 bytes is no body (Python's urllib sends Content-Length: 0 on a POST without data), nor is
 * `{}`. Mounted
 * after the token check and the body limit, so a caller without a token learns nothing here and a
 * chunked body is read only up to the limit.
 */
export function strictRequests(app: OpenAPIHono<ApiEnv>): MiddlewareHandler<ApiEnv> {
  let routes: RouteInput[] | undefined;
  return async (c, next) => {
    // Read at the first request: every route is registered by then.
    routes ??= routeInputs(app);
    const method = c.req.method === 'HEAD' ? 'GET' : c.req.method;
    const route = routes.find((r) => r.method === method && r.pattern.test(c.req.path));
    if (!route) return next(); // no such route: the 404 says so
    const queries = c.req.queries();
    const unknown = Object.keys(queries).filter((key) => route.query && !route.query.includes(key));
    if (unknown.length > 0) {
      const taken =
        route.query!.length > 0
          ? `the parameters are ${route.query!.join(', ')}`
          : `${route.method} ${route.path} takes no query parameters`;
      return c.json(
        errorBody(
          'invalid',
          `unknown query parameter ${unknown.map((k) => JSON.stringify(k)).join(', ')}; ${taken}`,
          unknown[0],
        ),
        400,
      );
    }
    // Each is taken once: ?order=ended&order=ended was refused as "order must be one of ...", a value it
    // takes, and ?name=a&name=b as "must be a string, not an array".
    const repeated = Object.keys(queries).find((key) => (queries[key]?.length ?? 0) > 1);
    if (repeated !== undefined)
      return c.json(errorBody('invalid', `${repeated} given more than once: give it once`, repeated), 400);
    if (!route.body) {
      const bytes = await bodyBytes(c);
      if (bytes > 0 && !(await emptyJsonObject(c)))
        return c.json(
          errorBody(
            'invalid',
            `${route.method} ${route.path} takes no body (got ${bytes} bytes): send none, or {}`,
          ),
          400,
        );
    }
    await next();
  };
}

function routeInputs(app: OpenAPIHono<ApiEnv>): RouteInput[] {
  const routes: RouteInput[] = [];
  for (const definition of app.openAPIRegistry.definitions) {
    if (definition.type !== 'route') continue;
    const { method, path, request } = definition.route;
    const query = request?.query as { shape?: Record<string, unknown> } | undefined;
    routes.push({
      method: method.toUpperCase(),
      path,
      pattern: new RegExp(
        `^${path
          .split(/(\{[^}]+\})/)
          .map((part) => (part.startsWith('{') ? '[^/]+' : part.replace(/[.*+?^$()|[\]\\]/g, '\\$&')))
          .join('')}$`,
      ),
      // A query schema that is no plain object (none is today) is left to decide for itself.
      query: query === undefined ? [] : query.shape ? Object.keys(query.shape) : undefined,
      body: request?.body !== undefined,
    });
  }
  // A literal segment before a parameter (POST /v1/classes/validate, not a class named "validate").
  return routes.sort((a, b) => a.path.split('{').length - b.path.split('{').length);
}

/**
 * `{}` is taken as no body: a hand-written client following docs/client.md may well post `json={}` to
 * /complete, as accepted until 2026-12-01, and refusing it would leave its job holding its GPUs (found
 * in review). Anything else in a body a route does not take is refused.
 */
async function emptyJsonObject(c: Context<ApiEnv>): Promise<boolean> {
  return (await c.req.text()).trim() === '{}';
}

/** The body's size: Content-Length when given, else what a chunked body holds (read up to the limit). */
async function bodyBytes(c: Context<ApiEnv>): Promise<number> {
  const length = c.req.header('content-length');
  if (length !== undefined) return Number(length) || 0;
  if (c.req.raw.body === null) return 0;
  return (await c.req.arrayBuffer()).byteLength;
}
