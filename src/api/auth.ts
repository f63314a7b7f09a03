import type { MiddlewareHandler } from 'hono';
import { tokensEqual } from '../service/tokens.ts';
import { errorBody } from './errors.ts';

export function bearer(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match?.[1];
}

/**
 * Operator routes need the operator token. Job routes (/v1/jobs/{id}/...) also accept the job's own
 * token, which the handler checks against the job; the middleware marks which kind was given.
 */
export function operatorOrJobAuth(
  operatorToken: string,
): MiddlewareHandler<{ Variables: { operator: boolean } }> {
  return async (c, next) => {
    const token = bearer(c.req.header('authorization'));
    if (token === undefined) {
      return c.json(errorBody('unauthorized', 'missing bearer token (Authorization: Bearer <token>)'), 401);
    }
    const operator = tokensEqual(token, operatorToken);
    const jobRoute =
      /^\/v1\/jobs\/\d+\/(progress|allocation|complete|cancel)$/.test(c.req.path) ||
      /^\/v1\/jobs\/\d+$/.test(c.req.path);
    if (!operator && !jobRoute) return c.json(errorBody('unauthorized', 'wrong token'), 401);
    c.set('operator', operator);
    await next();
  };
}
