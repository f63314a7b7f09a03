import { z } from '@hono/zod-openapi';

/**
 * A request object that refuses fields it does not know, naming the ones it takes: zod's own
 * "Unrecognized key" left a caller guessing whether `nmae` or `budget` was the mistake.
 */
export function strictBody<Shape extends z.ZodRawShape>(shape: Shape) {
  const fields = Object.keys(shape).join(', ');
  return z.strictObject(shape, {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? `unknown field ${issue.keys.map((k) => `"${k}"`).join(', ')}; the fields are ${fields}`
        : undefined,
  });
}

/**
 * A query that refuses parameters it does not know, naming the ones it takes: `?states=running` (for
 * `state`) listed every job as if no filter had been asked for.
 */
export function strictQuery<Shape extends z.ZodRawShape>(shape: Shape) {
  const parameters = Object.keys(shape).join(', ');
  return z.strictObject(shape, {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? `unknown query parameter ${issue.keys.map((k) => `"${k}"`).join(', ')}; the parameters are ${parameters}`
        : undefined,
  });
}
