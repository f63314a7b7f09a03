/** Field makers the response schemas share (responses.ts, responses-budget.ts). */
import { z } from '@hono/zod-openapi';

export const time = () => z.string().openapi({ format: 'date-time' });
export const gpuHours = (description: string) => z.number().openapi({ description });
/** Parts whose fields belong to an adapter (cloud capacity, removals): described, open for more. */
export const described = (description: string) =>
  z.object({}).catchall(z.unknown()).openapi({ description, additionalProperties: true });
