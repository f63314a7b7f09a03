import { z } from '@hono/zod-openapi';
import { strictBody, strictQuery } from './strict.ts';
import { BOUNDS, className, numberFromTo, printableName, wholeFromTo } from './bounds.ts';
import { WorkloadSchema } from './workload.ts';
import { ID_LIKE_NAME_MESSAGE, looksLikeJobId } from '../core/job-ref.ts';

export const ErrorSchema = z
  .object({
    error: z.object({
      code: z.string().openapi({ example: 'budget_below_minimum' }),
      message: z.string(),
      field: z.string().optional().openapi({ example: 'gpuHoursPerHour' }),
      minFeasibleBudget: z.number().optional().openapi({
        description:
          'with a refused budget (400 invalid, 422 budget_below_minimum): the smallest budget accepted',
      }),
    }),
  })
  .openapi('Error');

/**
 * A number in a path or query string, in decimal notation only: `Number()` alone would also read 0x14,
 * 0b10100, 1e1 or " 20" as some other number, and an empty one as 0. Anything else reads as NaN, which
 * is refused as not a number.
 */
export const decimalNumber = (pattern = /^-?[0-9]+(\.[0-9]+)?$/) =>
  z.preprocess((v, ctx) => {
    // A parameter given twice (?limit=2&limit=3) is not "not a number": said as what it is.
    if (Array.isArray(v)) {
      ctx.addIssue({ code: 'custom', message: 'given more than once: give it once' });
      return z.NEVER;
    }
    if (typeof v === 'string' && !pattern.test(v)) {
      const kind = pattern.test('-1') ? 'a number' : 'a whole number';
      ctx.addIssue({ code: 'custom', message: `must be ${kind} in decimal digits (e.g. 20), got "${v}"` });
      return z.NEVER;
    }
    return v;
  }, z.coerce.number());

/** A path's id: digits only, a whole number from 1. */
export const pathId = (example: number) =>
  decimalNumber(/^[0-9]+$/)
    .pipe(wholeFromTo(1, Number.MAX_SAFE_INTEGER))
    .openapi({
      param: { name: 'id', in: 'path' },
      type: 'integer',
      minimum: 1,
      maximum: Number.MAX_SAFE_INTEGER,
      example,
    });

export const JobIdParam = z.object({ id: pathId(12) });

export const RegisterJobBody = strictBody({
  class: className().openapi({ example: 'cifar10' }),
  name: printableName(BOUNDS.jobName)
    .refine((name) => !looksLikeJobId(name), ID_LIKE_NAME_MESSAGE)
    // Shown in a table, " r18" reads as r18, and `boa jobs cancel r18` did not find it (found in review).
    .refine((name) => name === name.trim(), 'must not begin or end with a space')
    .optional()
    .openapi({ example: 'resnet18-lr0.1' }),
  workload: WorkloadSchema.optional().openapi({
    description: 'what boa runs for the job; without it the job launches itself and polls its allocation',
  }),
}).openapi('RegisterJob');

/** A report sender's id: what the clients make (a random hex word) and room for others' own. */
const REPORT_SENDER = /^[A-Za-z0-9._:-]{1,64}$/;

const ReportSequenceBody = strictBody({
  sender: z
    .string()
    .regex(REPORT_SENDER, 'senders are 1-64 letters, digits, . _ : or -')
    .openapi({ description: 'the sending client instance: another id for each process and replica' }),
  number: wholeFromTo(0, Number.MAX_SAFE_INTEGER).openapi({
    description: 'rises with each report the sender makes; the same when it sends one again',
  }),
})
  .openapi('ReportSequence')
  .openapi({
    description:
      "the report's place among its sender's (optional; the clients send it): one numbered no higher than a report boa already took from the sender (an attempt a proxy forwarded late, or sent again) changes nothing and is answered as a poll is",
  });

export const ProgressBody = strictBody({
  statEpoch: wholeFromTo(0, BOUNDS.statEpoch).openapi({
    description: 'the statistical epoch the job is in now',
  }),
  workDoneSeconds: numberFromTo(0, BOUNDS.workSeconds).optional().openapi({
    description: 'work done so far in that statistical epoch, in 1-GPU seconds (optional)',
  }),
  generation: wholeFromTo(0, Number.MAX_SAFE_INTEGER).optional().openapi({
    description:
      'the generation the reporting replica runs (its BOA_GENERATION, or the allocation it adopted); a report from one since replaced does not time the epoch it starts (optional; the clients send it)',
  }),
  sequence: ReportSequenceBody.optional(),
}).openapi('Progress');

export const BudgetBody = strictBody({
  // Refused at 0 or below, or as no number, with the smallest accepted budget said (the route's hook,
  // budgetRefused in routes/budget-refused.ts: the schema does not know the node pool).
  gpuHoursPerHour: z
    .number()
    .positive()
    .max(BOUNDS.budget, `gpuHoursPerHour is at most ${BOUNDS.budget}`)
    .openapi({ example: 40 }),
}).openapi('Budget');

export const ClassBody = strictBody({
  // An object (checked as a profile after): z.unknown() named a missing one "a nonoptional".
  profile: z
    .record(z.string(), z.unknown())
    .openapi({ description: 'a class object of the profile file format (version 1)' }),
  priorRatePerHour: numberFromTo(0, BOUNDS.ratePerHour).optional(),
}).openapi('ClassPut');

export const ClassNameParam = z.object({
  name: className().openapi({ param: { name: 'name', in: 'path' }, example: 'cifar10' }),
});

/** A whole-number query parameter from `min` to `max`, in decimal notation (decimalNumber). */
export const queryInteger = (min: number, max: number, description: string) =>
  decimalNumber()
    .pipe(wholeFromTo(min, max))
    .openapi({ type: 'integer', minimum: min, maximum: max, description });

/** The same with a default when it is not given (shown in the OpenAPI document too). */
export const queryIntegerOr = (fallback: number, min: number, max: number, description: string) =>
  queryInteger(min, max, description).default(fallback).openapi({ default: fallback });

export const JobLogsQuery = strictQuery({
  rank: queryIntegerOr(0, 0, 10_000, "the replica's rank"),
  generation: queryInteger(
    1,
    Number.MAX_SAFE_INTEGER,
    'default: the newest generation whose log is kept',
  ).optional(),
  tail: queryIntegerOr(100, 1, 10_000, 'the last this many lines'),
  cursor: z.string().max(64).optional().openapi({
    description:
      'followed: from where a follower cut off got to: the boa-log-cursor header it was answered with (and skip), not the last lines',
  }),
  skip: queryInteger(
    0,
    Number.MAX_SAFE_INTEGER,
    'with cursor: bytes past it (the boa-log-skip header it was answered with plus the bytes it got)',
  ).optional(),
  follow: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true')
    .openapi({
      type: 'boolean',
      description:
        'stream the lines as the replica writes them, until it ends (then ask again for the next generation)',
    }),
});

const STATES = ['waiting', 'running', 'done', 'cancelled', 'failed', 'lost'] as const;
const STATE_LIST = new RegExp(`^(${STATES.join('|')})(,(${STATES.join('|')}))*$`);

export const ListJobsQuery = strictQuery({
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
  limit: queryIntegerOr(1000, 1, 10_000, 'the newest this many jobs, listed oldest first'),
  before: queryInteger(
    1,
    Number.MAX_SAFE_INTEGER,
    'only jobs with a lower id: the page before one whose first job had this id',
  ).optional(),
  order: z.enum(['submitted', 'ended', 'queue']).optional().openapi({
    description:
      'submitted (default): the newest submitted, oldest first; ended: the jobs that ended last, newest first (jobs not ended after them; not with before, 400); queue: the jobs queued for the budget at the last tick, in the order they start (queuePlace 1 first; state, if given, must include waiting; not with before, 400)',
  }),
  // Only `true`: `stopping=false` would read as "those with none stopping", which it does not list.
  stopping: z
    .enum(['true'], { message: 'stopping takes only true (leave it out for every job)' })
    .optional()
    .openapi({
      type: 'boolean',
      description:
        "true: only jobs with replicas boa stops that still run within their grace, holding GPUs (the job view's stopping set): an ended job's last replicas, a running job's older generation; listed as submitted (not with order=ended or order=queue, 400)",
    }),
});

/** The number form of a time, out of range; 8.64e15 ms (the year 275760) is the most a JavaScript date holds. */
const MS_SINCE_1970 =
  'must be milliseconds since 1970, a whole number from 0 to 8640000000000000, or an ISO 8601 date-time with its offset';

/** A time as ms since the epoch or an ISO 8601 date-time with its offset. */
const instant = (description: string) =>
  z
    .union(
      [
        z.number().int(MS_SINCE_1970).min(0, MS_SINCE_1970).max(8.64e15, MS_SINCE_1970),
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
      ],
      {
        error: (issue) =>
          issue.code === 'invalid_union'
            ? 'must be milliseconds since 1970 or an ISO 8601 date-time with its offset, e.g. 2026-11-27T09:30:00Z'
            : undefined,
      },
    )
    .transform((v) => (typeof v === 'number' ? v : Date.parse(v)))
    // As the number form: from 1970 on (0000-01-01 was stored as year 0, and every later import then
    // overlapped it).
    .refine((ms) => ms >= 0, 'must be from 1970-01-01T00:00:00Z on (milliseconds since then, or a date-time)')
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

export const FrontierQuery = strictQuery({ format: z.enum(['json', 'svg']).default('json') });

/** Responses are documented loosely: their shapes live in src/service/views.ts. */
export const AnyJson = z.record(z.string(), z.unknown());

export const jsonContent = <T extends z.ZodType>(schema: T, description: string) => ({
  content: { 'application/json': { schema } },
  description,
});

/** A route's required JSON request body. */
export const jsonBody = <T>(schema: T) => ({
  body: { content: { 'application/json': { schema } }, required: true },
});

export const errors = {
  400: jsonContent(ErrorSchema, 'invalid input; the error names the field'),
  401: jsonContent(ErrorSchema, 'missing or wrong bearer token'),
} as const;

/** A route that reads a body can also refuse it before reading it (src/api/limits.ts, errors.ts). */
export const bodyErrors = {
  ...errors,
  413: jsonContent(ErrorSchema, 'the body is larger than the service takes'),
  415: jsonContent(ErrorSchema, 'the body is not sent as application/json'),
} as const;
