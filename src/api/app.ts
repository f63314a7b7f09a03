import type { IncomingMessage } from 'node:http';
import { OpenAPIHono } from '@hono/zod-openapi';
import { connectionEnd, TOKEN_PROOF_NONCE, TOKEN_PROOF_PATH, tokenProof } from '../core/token-proof.ts';
import type { OperatorToken } from '../service/operator-token.ts';
import type { Scheduler } from '../service/scheduler.ts';
import type { BoaService } from '../service/service.ts';
import { asOperatorToken, operatorOnly, operatorOrJobAuth } from './auth.ts';
import type { ApiEnv } from './env.ts';
import { errorBody, handleError, validationError } from './errors.ts';
import { liveness, readiness } from './health.ts';
import { bodyLimits } from './limits.ts';
import { refuseProtoKeys } from './proto-keys.ts';
import { strictRequests } from './strict-requests.ts';
import { prometheusRegistry } from './prometheus.ts';
import { historyRoutes } from './routes/history.ts';
import { jobRoutes } from './routes/jobs.ts';
import { classRoutes } from './routes/classes.ts';
import { operatorRoutes } from './routes/operator.ts';
import { ledgerRoutes } from './routes/ledger.ts';
import { nodeRoutes } from './routes/nodes.ts';
import { dashboardRoutes } from './dashboard/index.ts';
import { describeUnversionedRoutes } from './unversioned-docs.ts';
import { SECURITY_HEADERS } from './security-headers.ts';

/** The HTTP API: operator and job routes under /v1 (bearer tokens), plus health, metrics and OpenAPI. */
export function createApp(service: BoaService, scheduler: Scheduler, operatorToken: OperatorToken | string) {
  const app = new OpenAPIHono<ApiEnv>({
    defaultHook: (result, c) => {
      if (!result.success) return validationError(c, result.error);
    },
  });
  app.onError((error, c) => handleError(error, c, service.deps.logger, service.deps.repo.db.$client.name));
  // After the answer is made, whoever made it (a route, onError, notFound): security-headers.ts.
  app.use('*', async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) c.res.headers.set(name, value);
  });
  app.notFound((c) => c.json(errorBody('not_found', `no route ${c.req.method} ${c.req.path}`), 404));
  app.use('*', async (c, next) => {
    c.set('service', service);
    c.set('scheduler', scheduler);
    await next();
  });

  app.get('/healthz', (c) => {
    const { status, body } = liveness(service);
    return c.json(body, status);
  });
  app.get('/readyz', (c) => {
    const { status, body } = readiness(service);
    return c.json(body, status);
  });
  // Open, as the CLI asks it before it sends the token it read from the data dir: the answer proves
  // this service holds that token without giving it (src/core/token-proof.ts, docs/security.md).
  const tokens = asOperatorToken(operatorToken);
  app.get(TOKEN_PROOF_PATH, (c) => {
    const nonce = c.req.query('nonce');
    if (nonce === undefined || !TOKEN_PROOF_NONCE.test(nonce)) {
      return c.json(
        errorBody('bad_nonce', 'nonce must be 32 to 128 characters of A-Z, a-z, 0-9, - and _'),
        400,
      );
    }
    // The connection as this end sees it (node-server's bindings); none in a request made in-process.
    const socket = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.socket;
    if (!socket?.localPort) {
      return c.json(errorBody('no_connection', 'this request came over no connection to prove it on'), 400);
    }
    const end = connectionEnd(socket.localAddress, socket.localPort);
    return c.json({ proof: tokenProof(tokens.current, nonce, end) });
  });
  const registry = prometheusRegistry(service);
  // Metrics name jobs, classes and spend: the operator token is needed, as for /v1 (Prometheus sends
  // it with `authorization: {credentials_file: ...}`).
  app.use('/metrics', operatorOnly(operatorToken));
  app.get('/metrics', async (c) =>
    c.body(await registry.metrics(), 200, { 'content-type': registry.contentType }),
  );

  // Tokens first, then the body's size, both before any handler reads the body.
  app.use('/v1/*', operatorOrJobAuth(operatorToken));
  app.use('*', bodyLimits());
  app.use('/v1/*', strictRequests(app));
  app.use('/v1/*', refuseProtoKeys());
  jobRoutes(app);
  operatorRoutes(app);
  classRoutes(app);
  ledgerRoutes(app);
  nodeRoutes(app);
  historyRoutes(app);
  dashboardRoutes(app);

  describeUnversionedRoutes(app);
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer' });
  // Made once, at its first request (every route is registered by then), not at each: it costs about
  // 50 ms of the one thread and needs no token, so a client asking for it in a loop held every request,
  // the ticks and the probes for seconds (found in a security review).
  let openapi: string | undefined;
  app.get('/openapi.json', (c) => {
    openapi ??= JSON.stringify(app.getOpenAPI31Document(OPENAPI_CONFIG));
    return c.body(openapi, 200, { 'content-type': 'application/json' });
  });
  return app;
}

const OPENAPI_CONFIG = {
  openapi: '3.1.0',
  info: {
    title: 'boa',
    version: '1',
    description: 'Budget-aware GPU rental for ML training',
    license: { name: 'Apache-2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0' },
  },
  // Relative: the service that serves the document is the server clients call.
  servers: [{ url: '/', description: 'this boa service' }],
  security: [{ bearer: [] }],
};
