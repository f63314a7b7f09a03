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
