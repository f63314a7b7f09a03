import type { MiddlewareHandler } from 'hono';
import { errorBody } from './errors.ts';

/** Deeper than any body the API takes: a key below it is not looked at (the schemas refuse such a body). */
const MAX_DEPTH = 32;

/**
 * Refuses a JSON body with a key named `__proto__`. JSON.parse keeps it as data, but zod skips it in
 * every object and record, so `"env": {"__proto__": "x"}` was accepted and the variable silently
 * dropped (found in review). Mounted after the token check and the body limit; a body that is not
 * valid JSON is left to the validator, which says so. The walk is iterative and stops at MAX_DEPTH: a
 * body nested thousands deep overflowed a recursive one's stack (a 500, found in review).
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
      const field = protoKeyPath(body);
      if (field !== undefined)
        return c.json(
          errorBody('invalid', `${field}: __proto__ cannot be given as a field or a name`, field),
          400,
        );
    }
    await next();
  };
}

/** The dotted path of the first `__proto__` key within MAX_DEPTH, if any. */
function protoKeyPath(root: unknown): string | undefined {
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value: root, path: '', depth: 0 }];
  while (stack.length > 0) {
    const { value, path, depth } = stack.pop()!;
    if (value === null || typeof value !== 'object' || depth >= MAX_DEPTH) continue;
    for (const key of Object.keys(value)) {
      const at = path === '' ? key : `${path}.${key}`;
      if (key === '__proto__') return at;
      const child = (value as Record<string, unknown>)[key];
      if (child !== null && typeof child === 'object')
        stack.push({ value: child, path: at, depth: depth + 1 });
    }
  }
  return undefined;
}
