/**
 * GET /v1/ledger: paid and allocated GPU-hours per hour over time, against the budget (what the
 * dashboard and anyone auditing spend want to see), and GET /v1/resizes: the latest node-group resizes.
 */
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { ledgerAveragesFrom } from '../../service/budget.ts';
import { budgetSpans } from '../../service/budget-history.ts';
import { ledgerKeptMs } from '../../service/retention.ts';
import type { BoaService } from '../../service/service.ts';
import { requireOperator } from '../auth.ts';
import { positiveUpTo } from '../bounds.ts';
import type { ApiEnv } from '../env.ts';
import { decimalNumber, errors, jsonContent, queryIntegerOr } from '../schemas.ts';
import { strictQuery } from '../strict.ts';

const HOUR = 3_600_000;

export const LedgerQuery = strictQuery({
  hours: decimalNumber().pipe(positiveUpTo(744, '31 days')).default(24).openapi({
    type: 'number',
    exclusiveMinimum: 0,
    maximum: 744,
    default: 24,
    description:
      'how far back, hours; never before the first start, nor before the rows kept (the longest window plus a day)',
  }),
  points: queryIntegerOr(96, 1, 500, 'time buckets'),
});

const LedgerPoint = z
  .object({
    from: z.string().openapi({ format: 'date-time' }),
    to: z.string().openapi({ format: 'date-time' }),
    paidGpuHoursPerHour: z.number().openapi({ description: 'paid GPU-hours per hour within the bucket' }),
    allocatedGpuHoursPerHour: z.number().openapi({
      description:
        "allocated to jobs within the bucket, at their plan's widths (GPUs the idle fill lends are run but not counted)",
    }),
    paidWindowAverage: z.number().openapi({
      description: 'paid GPU-hours per hour over the budget window ending at `to`: what the budget holds',
    }),
  })
  .openapi('LedgerPoint');

export const LedgerView = z
  .object({
    budget: z.number().nullable().openapi({ description: 'GPU-hours per hour; null when none is set' }),
    budgetSetAt: z.string().nullable(),
    windowHours: z.number().openapi({ description: 'the budget window: the average the budget holds' }),
    series: z.array(LedgerPoint),
    budgets: z
      .array(
        z.object({
          from: z.string().openapi({ format: 'date-time' }),
          to: z.string().openapi({ format: 'date-time' }),
          gpuHoursPerHour: z.number(),
        }),
      )
      .openapi({
        description:
          "the budgets in force over the series' span, oldest first, each over the part of it it was in force; none before the first budget, nor before the oldest value kept (those in force within a budget window of the last change)",
      }),
  })
  .openapi('Ledger');

const ResizeView = z
  .object({
    at: z.string().openapi({ format: 'date-time' }),
    target: z.number().int(),
    requested: z.number().int(),
    status: z.string().openapi({
      description:
        'requested, applied, failed, or interrupted (a crash came before the node group answered, and the group did not hold it at restart)',
    }),
    error: z.string().nullable(),
  })
  .openapi('Resize');

export const ResizesView = z.object({ resizes: z.array(ResizeView) }).openapi('Resizes');

const round = (value: number) => Number(value.toFixed(4));

/**
 * The ledger in `points` buckets over the last `hours`: never before the service first started, nor
 * before the rows retention keeps (older time would read as time nothing was paid).
 */
export function ledgerSeries(service: BoaService, hours: number, points: number): z.infer<typeof LedgerView> {
  const { state, deps } = service;
  const now = deps.clock.now();
  const window = deps.config.budgetWindowHours * HOUR;
  const floor = Math.max(state.ledgerSince, now - ledgerKeptMs(deps.config));
  const from = Math.max(now - hours * HOUR, floor);
  const span = now - from;
  // Buckets of at least a millisecond. Each edge is computed from its index: edges summed step by step
  // drift by floating-point error, and often ended a hair before now, adding a sliver of a bucket.
  const count = Math.max(0, Math.min(points, Math.ceil(span)));
  const edge = (i: number) => (i === count ? now : from + (span * i) / count);
  const averages = ledgerAveragesFrom(service, floor);
  const series = [];
  for (let i = 0; i < count; i++) {
    const t = edge(i);
    const to = edge(i + 1);
    const bucket = averages(t, to);
    const average = averages(Math.max(to - window, floor), to);
    series.push({
      from: new Date(t).toISOString(),
      to: new Date(to).toISOString(),
      paidGpuHoursPerHour: round(bucket.paidGpuHoursPerHour),
      allocatedGpuHoursPerHour: round(bucket.allocatedGpuHoursPerHour),
      paidWindowAverage: round(average.paidGpuHoursPerHour),
    });
  }
  return {
    budget: state.budget?.gpuHoursPerHour ?? null,
    budgetSetAt: state.budget ? new Date(state.budget.setAt).toISOString() : null,
    windowHours: deps.config.budgetWindowHours,
    series,
    budgets: budgetSpans(state.budget, from, now).map((b) => ({
      from: new Date(b.from).toISOString(),
      to: new Date(b.to).toISOString(),
      gpuHoursPerHour: b.gpuHoursPerHour,
    })),
  };
}

export function ledgerRoutes(app: OpenAPIHono<ApiEnv>) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/ledger',
      operationId: 'getLedger',
      summary: 'Paid and allocated GPU-hours per hour over time, with the budget and its window',
      request: { query: LedgerQuery },
      responses: { 200: jsonContent(LedgerView, 'the ledger as a time series'), ...errors },
    }),
    (c) => {
      requireOperator(c);
      const { hours, points } = c.req.valid('query');
      return c.json(ledgerSeries(c.var.service, hours, points), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/resizes',
      operationId: 'listResizes',
      summary: 'The latest node-group resizes, newest first',
      request: { query: strictQuery({ limit: queryIntegerOr(10, 1, 100, 'the newest this many resizes') }) },
      responses: { 200: jsonContent(ResizesView, 'resizes'), ...errors },
    }),
    (c) => {
      requireOperator(c);
      const rows = c.var.service.deps.repo.recentResizes(c.req.valid('query').limit);
      const resizes = rows.map((r) => ({
        at: new Date(r.at).toISOString(),
        target: r.target,
        requested: r.requested,
        status: r.status,
        error: r.error ?? null,
      }));
      return c.json({ resizes }, 200);
    },
  );
}
