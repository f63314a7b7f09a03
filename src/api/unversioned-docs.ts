/**
 * The routes outside /v1 in /openapi.json: the probes, the metrics and the dashboard page (found in a
 * newcomer trial: served but not in the document, which the docs said covered every route). Their
 * handlers are plain hono ones (app.ts, dashboard/index.ts), not validated: these only describe them.
 * Left out: the page's scripts under /dashboard/ (static files it loads) and /openapi.json itself.
 */
import { type OpenAPIHono, z } from '@hono/zod-openapi';
import type { ApiEnv } from './env.ts';
import { ErrorSchema, jsonContent } from './schemas.ts';

const reason = z.string().optional().openapi({ description: 'why not, when not (503)' });

export const LivenessView = z.object({ ok: z.boolean(), reason }).openapi('Liveness');

export const ReadinessView = z
  .object({
    ready: z.boolean(),
    lastTickAt: z.number().nullable().openapi({ description: 'the last tick that succeeded, Unix ms' }),
    reason,
  })
  .openapi('Readiness');

/** Until boot and the first tick end every path answers this (src/service/startup.ts). */
const starting = jsonContent(ErrorSchema, 'starting (`starting`)');

export function describeUnversionedRoutes(app: OpenAPIHono<ApiEnv>): void {
  const registry = app.openAPIRegistry;
  registry.registerPath({
    method: 'get',
    path: '/healthz',
    operationId: 'getLiveness',
    summary: 'Liveness: 503 once a scheduling tick has run for more than 10 minutes (hung)',
    security: [],
    responses: {
      200: jsonContent(LivenessView, 'live'),
      503: {
        description: 'a tick is hung, or the service is starting',
        content: { 'application/json': { schema: z.union([LivenessView, ErrorSchema]) } },
      },
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/readyz',
    operationId: 'getReadiness',
    summary: 'Readiness: 503 before the first tick and once no tick has succeeded for three tick intervals',
    security: [],
    responses: {
      200: jsonContent(ReadinessView, 'ready'),
      503: {
        description: 'not ready, or the service is starting',
        content: { 'application/json': { schema: z.union([ReadinessView, ErrorSchema]) } },
      },
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/token-proof',
    operationId: 'getTokenProof',
    summary:
      "Proves this service holds the operator token, without giving it: the CLI asks before it sends the token it read from a data dir's token file (docs/security.md)",
    security: [],
    request: {
      query: z.object({
        nonce: z.string().openapi({
          description: "the asker's random nonce: 32 to 128 characters of A-Z, a-z, 0-9, - and _",
        }),
      }),
    },
    responses: {
      200: jsonContent(
        z
          .object({
            proof: z.string().openapi({
              description:
                'base64url HMAC-SHA256, keyed with the operator token, of "boa token proof 1\\n<nonce>\\n<address> <port>": the connection\'s address and port at the service\'s end (an IPv4 address without ::ffff:)',
            }),
          })
          .openapi('TokenProof'),
        'the proof',
      ),
      400: jsonContent(
        ErrorSchema,
        'a nonce not of that form (`bad_nonce`), or no connection (`no_connection`)',
      ),
      503: starting,
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/metrics',
    operationId: 'getMetrics',
    summary: 'Prometheus metrics (they name classes, jobs and spend: the operator token is needed)',
    responses: {
      200: {
        description: 'the Prometheus text exposition format (docs/api.md lists the metrics)',
        content: { 'text/plain': { schema: z.string() } },
      },
      401: jsonContent(ErrorSchema, 'missing or wrong bearer token'),
      503: starting,
    },
  });
}
