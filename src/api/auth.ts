import type { Context, MiddlewareHandler } from 'hono';
import { OperatorToken } from '../service/operator-token.ts';
import { ServiceError } from '../service/errors.ts';
import type { BoaService } from '../service/service.ts';
import type { ApiEnv } from './env.ts';
import { errorBody } from './errors.ts';
import { refusalLogOf } from './refusals.ts';

export function bearer(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match?.[1];
}

/** A 401, counted in the service's refusal log. */
function unauthorized(c: Context<ApiEnv>, message: string) {
  refusalLogOf(c.var.service).refused(c.req.path);
  return c.json(errorBody('unauthorized', message), 401);
}

/** The routes a job's own token may call: /v1/jobs/{id} and its actions. */
const JOB_ROUTE = /^\/v1\/jobs\/(\d{1,15})(?:\/(?:progress|allocation|complete|cancel|logs))?$/;
/** A job route with more path before it (/v1/v1/jobs/3/allocation): a job client's BOA_URL with a path. */
const PREFIXED_JOB_ROUTE =
  /^(\/v1(?:\/.*?)?)\/v1\/jobs\/\d{1,15}(?:\/(?:progress|allocation|complete|cancel|logs))?$/;

function prefixedJobRouteMessage(method: string, path: string): string {
  const prefix = PREFIXED_JOB_ROUTE.exec(path)?.[1] ?? '';
  return (
    `no route ${method} ${path}: job routes start at /v1/jobs/, so a job's BOA_URL is boa's address ` +
    `without the path "${prefix}" after it (such as http://127.0.0.1:8080)`
  );
}

/**
 * Operator routes need the operator token. Job routes (/v1/jobs/{id}/...) also accept the job's own
 * token, which is checked here against the stored job, before any handler reads the body: a caller
 * without a valid token cannot make the service read or parse anything it sends.
 */
export function operatorOrJobAuth(operatorToken: OperatorToken | string): MiddlewareHandler<ApiEnv> {
  const tokens = asOperatorToken(operatorToken);
  return async (c, next) => {
    const header = c.req.header('authorization');
    const token = bearer(header);
    if (token === undefined) {
      // A header that is there but not one bearer token (another scheme, a token pasted with a space)
      // is not "missing"; it is never echoed, as it may hold a secret.
      const message =
        header === undefined
          ? 'missing bearer token (Authorization: Bearer <token>)'
          : 'the Authorization header is not "Bearer <token>" (one token, no spaces)';
      return unauthorized(c, message);
    }
    let operator = tokens.matches(token);
    if (!operator) {
      const jobRoute = JOB_ROUTE.exec(c.req.path);
      if (jobRoute) {
        if (!isJobToken(c.var.service, Number(jobRoute[1]), token)) {
          // Maybe an operator token rotated since boa last read it; if not, the same 401 whether the
          // job exists or not, so a caller without a token cannot probe which ids exist.
          if (!(await tokens.matchesAfterRefresh(token))) {
            // Says where to look (a job's two variables come from one submission) without saying
            // whether the job exists: a bare "wrong token" sent a mistyped BOA_JOB_ID's author to the token.
            return unauthorized(c, jobTokenRefusal(Number(jobRoute[1])));
          }
          operator = true;
        }
      } else if (c.req.path.startsWith('/v1/jobs/')) {
        // A job token only ever calls job routes: a near miss (a trailing slash) is a wrong path.
        return c.json(errorBody('not_found', `no route ${c.req.method} ${c.req.path}`), 404);
      } else if (await tokens.matchesAfterRefresh(token)) {
        operator = true;
      } else if (PREFIXED_JOB_ROUTE.test(c.req.path)) {
        // A job whose BOA_URL ends in /v1 (the docs write the routes as /v1/jobs/...): "wrong token"
        // sent its author to check a token that was right.
        return c.json(errorBody('not_found', prefixedJobRouteMessage(c.req.method, c.req.path)), 404);
      } else {
        return unauthorized(c, 'wrong token');
      }
    }
    c.set('operator', operator);
    await next();
  };
}

/** The same words whether job `id` exists or not. */
function jobTokenRefusal(id: number): string {
  return (
    `wrong token: neither the operator token nor job ${id}'s; a job sends the ` +
    'BOA_JOB_TOKEN and BOA_JOB_ID boa gave it at submission (check both)'
  );
}

/** Whether `token` is the job's own; false when it is not or when there is no such job. */
function isJobToken(service: BoaService, id: number, token: string): boolean {
  try {
    service.job(id, token);
    return true;
  } catch (error) {
    if (error instanceof ServiceError && (error.status === 401 || error.status === 404)) return false;
    throw error;
  }
}

export function asOperatorToken(token: OperatorToken | string): OperatorToken {
  return typeof token === 'string' ? OperatorToken.fixed(token) : token;
}

/** Routes outside /v1 that only the operator may read (/metrics). */
export function operatorOnly(operatorToken: OperatorToken | string): MiddlewareHandler<ApiEnv> {
  const tokens = asOperatorToken(operatorToken);
  return async (c, next) => {
    const token = bearer(c.req.header('authorization'));
    if (token === undefined || !(await tokens.matchesAfterRefresh(token))) {
      return unauthorized(c, 'the operator bearer token is needed here');
    }
    await next();
  };
}

/** Inside a handler: only the operator may make this call (the job token reaches /v1 too). */
export function requireOperator(c: { get(k: 'operator'): boolean }): void {
  if (!c.get('operator')) throw new ServiceError(401, 'unauthorized', 'this call needs the operator token');
}
