/** Field makers the response schemas share (responses.ts, responses-budget.ts, responses-jobs.ts). */
import { z } from '@hono/zod-openapi';

export const time = () => z.string().openapi({ format: 'date-time' });
export const gpuHours = (description: string) => z.number().openapi({ description });
/** Parts whose fields belong to an adapter (cloud capacity, removals): described, open for more. */
export const described = (description: string) =>
  z.object({}).catchall(z.unknown()).openapi({ description, additionalProperties: true });

/** How much of the rate window the rates rest on: GET /v1/frontier's and GET /v1/budget's `rateWindow`. */
export const rateWindowFields = () => ({
  observedHours: z.number().openapi({
    description:
      'hours of arrivals the rate window has observed, imported history included, up to windowHours',
  }),
  windowHours: z.number().openapi({ description: 'the rate window (rateWindowHours)' }),
});
