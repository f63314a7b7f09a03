import { z } from '@hono/zod-openapi';
import { strictBody } from './strict.ts';
import { BOUNDS, className, printableName } from './bounds.ts';
import { WorkloadSchema } from './workload.ts';
import { ID_LIKE_NAME_MESSAGE, looksLikeJobId } from '../core/job-ref.ts';

export const ErrorSchema = z
  .object({
    error: z.object({
      code: z.string().openapi({ example: 'budget_below_minimum' }),
      message: z.string(),
      field: z.string().optional().openapi({ example: 'gpuHoursPerHour' }),
    }),
  })
  .openapi('Error');

export const JobIdParam = z.object({
  id: z.coerce
    .number()
    .int()
    .positive()
    .max(Number.MAX_SAFE_INTEGER)
    .openapi({ param: { name: 'id', in: 'path' }, example: 12 }),
});

export const RegisterJobBody = strictBody({
  class: className().openapi({ example: 'cifar10' }),
  name: printableName(BOUNDS.jobName)
    .refine((name) => !looksLikeJobId(name), ID_LIKE_NAME_MESSAGE)
    .optional()
    .openapi({ example: 'resnet18-lr0.1' }),
  workload: WorkloadSchema.optional().openapi({
    description: 'what boa runs for the job; without it the job launches itself and polls its allocation',
  }),
}).openapi('RegisterJob');

export const ProgressBody = strictBody({
  statEpoch: z
    .number()
    .int()
    .nonnegative()
    .max(BOUNDS.statEpoch)
    .openapi({ description: 'the statistical epoch the job is in now' }),
  workDoneSeconds: z.number().nonnegative().max(BOUNDS.workSeconds).optional().openapi({
    description: 'work done so far in that statistical epoch, in 1-GPU seconds (optional)',
  }),
}).openapi('Progress');

export const BudgetBody = strictBody({
  gpuHoursPerHour: z
    .number()
    .positive()
    .max(BOUNDS.budget, `gpuHoursPerHour is at most ${BOUNDS.budget}`)
    .openapi({ example: 40 }),
}).openapi('Budget');

export const ClassBody = strictBody({
  profile: z.unknown().openapi({ description: 'a class object of the profile file format (version 1)' }),
  priorRatePerHour: z.number().nonnegative().max(BOUNDS.ratePerHour).optional(),
}).openapi('ClassPut');

export const ClassNameParam = z.object({
  name: className().openapi({ param: { name: 'name', in: 'path' }, example: 'cifar10' }),
});

/** A query parameter read as a number: given empty (`?rank=`) it is refused, not read as 0. */
const queryNumber = () => z.preprocess((v) => (v === '' ? Number.NaN : v), z.coerce.number());

export const JobLogsQuery = z.object({
  rank: queryNumber()
    .pipe(z.number().int().min(0).max(10_000))
    .default(0)
    .openapi({ description: "the replica's rank" }),
  generation: z.coerce
    .number()
    .int()
    .min(1)
    .max(Number.MAX_SAFE_INTEGER)
    .optional()
    .openapi({ description: 'default: the newest generation whose log is kept' }),
  tail: z.coerce
    .number()
    .int()
    .min(1)
    .max(10_000)
    .default(100)
    .openapi({ description: 'the last this many lines' }),
});

const STATES = ['waiting', 'running', 'done', 'cancelled', 'failed', 'lost'] as const;
const STATE_LIST = new RegExp(`^(${STATES.join('|')})(,(${STATES.join('|')}))*$`);

export const ListJobsQuery = z.object({
  // A list in one parameter, so "the active jobs" (waiting,running) is one page, newest first.
  state: z
    .string()
    .regex(STATE_LIST, {
      message: `state must be one of ${STATES.map((s) => `"${s}"`).join(', ')}, or several separated by commas`,
    })
    .optional()
    .openapi({
      description: 'only jobs in this state, or in any of several: waiting,running',
      example: 'running',
    }),
  class: className().optional().openapi({ description: 'only jobs of this class' }),
  name: z
    .string()
    .min(1)
    .max(BOUNDS.jobName)
    .optional()
    .openapi({ description: 'only jobs of exactly this name' }),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(10_000)
    .default(1000)
    .openapi({ description: 'the newest this many jobs, listed oldest first' }),
});

/** A time as ms since the epoch or an ISO 8601 date-time with its offset. */
const instant = (description: string) =>
  z
    .union([
      z.number().int().nonnegative().max(8.64e15),
      z
        .string()
        .datetime({
          offset: true,
          message: 'an ISO 8601 date-time with its offset, e.g. 2026-11-27T09:30:00Z',
        })
        // Bounded so that the body limit can hold the longest valid import (limits.ts).
        .max(
          BOUNDS.isoTime,
          `an ISO 8601 date-time of at most ${BOUNDS.isoTime} characters (to the nanosecond)`,
        ),
    ])
    .transform((v) => (typeof v === 'number' ? v : Date.parse(v)))
    .openapi({ description, example: '2026-11-27T09:30:00Z' });

export const HistoryBody = strictBody({
  source: printableName(200).optional().openapi({ description: 'where it came from, e.g. a file name' }),
  observedFrom: instant(
    'start of the span the history covers; default: just before its first arrival',
  ).optional(),
  arrivals: z
    .array(
      strictBody({
        className: className().openapi({ example: 'cifar10' }),
        submittedAt: instant('when the job was submitted'),
      }),
    )
    .min(1)
    .max(BOUNDS.historyArrivals, `at most ${BOUNDS.historyArrivals} arrivals in one import`),
}).openapi('HistoryImport');

export const FrontierQuery = z.object({ format: z.enum(['json', 'svg']).default('json') });

/** Responses are documented loosely: their shapes live in src/service/views.ts. */
export const AnyJson = z.record(z.string(), z.unknown());

export const jsonContent = <T extends z.ZodType>(schema: T, description: string) => ({
  content: { 'application/json': { schema } },
  description,
});

export const errors = {
  400: jsonContent(ErrorSchema, 'invalid input; the error names the field'),
  401: jsonContent(ErrorSchema, 'missing or wrong bearer token'),
} as const;
