import type { MiddlewareHandler } from 'hono';
import { errorBody } from './errors.ts';

/**
 * Refuses a JSON body with a key named `__proto__` anywhere. JSON.parse keeps it as data, but zod skips
 * it in every object and record, so `"env": {"__proto__": "x"}` was accepted and the variable silently
 * dropped (found in review). Runs after the body limit; a body that is not valid JSON is left to the
 * validator, which says so.
 */
export function refuseProtoKeys(): MiddlewareHandler {
  return async (c, next) => {
    if (c.req.raw.body !== null && c.req.header('content-type')?.includes('json')) {
      let body: unknown;
      try {
        body = await c.req.json(); // cached: the validator reads the same parse
      } catch {
        return next();
      }
      const at = protoKeyPath(body, []);
      if (at !== undefined) {
        const field = at.join('.');
        return c.json(
          errorBody('invalid', `${field}: __proto__ cannot be given as a field or a name`, field),
          400,
        );
      }
    }
    await next();
  };
}

function protoKeyPath(value: unknown, path: string[]): string[] | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  for (const [key, child] of Object.entries(value)) {
    const at = [...path, key];
    if (key === '__proto__') return at;
    const found = protoKeyPath(child, at);
    if (found) return found;
  }
  return undefined;
}
