/**
 * A job's response bodies (GET /v1/jobs, /v1/jobs/{id}, its registration and its allocation), as
 * src/service/views.ts builds them: the jobs' own file, split from responses.ts (which re-exports them).
 */
import { z } from '@hono/zod-openapi';
import type { Workload } from '../service/ports.ts';

import { time } from './response-parts.ts';

export const JobView = z
  .object({
    id: z.number().int(),
    name: z.string().nullable(),
    class: z.string(),
    state: z.enum(['waiting', 'running', 'done', 'cancelled', 'failed', 'lost']),
    waitingFor: z.enum(['plan', 'budget', 'tick', 'nodes', 'gpus', 'stopping']).nullable().optional(),
    heldBy: z
      .object({ jobs: z.array(z.number().int()), killAt: z.string().nullable() })
      .nullable()
      .optional()
      .openapi({
        description:
          "a job waiting for GPUs replicas boa stops still hold (waitingFor: stopping; boa places nothing on them until those replicas are gone): the jobs whose replicas they are (its own older generation's too), and when SIGKILL comes at the latest (null until the executor has sent the stop); null otherwise",
      }),
    queuePlace: z.number().int().positive().nullable().optional().openapi({
      description:
        "a job waiting for the budget: its place in the queue at the last tick (1 starts first as the budget allows, in the order GET /v1/budget's control.queueOrder names; a narrower job behind it may start first where only it fits); null otherwise",
    }),
    narrowedBy: z.enum(['budget']).nullable().optional().openapi({
      description:
        "a running job's GPUs below its plan's width, when the budget's ceiling is why (narrowed, or kept at the width it runs at to spare a restart); null otherwise (its nodes boot, placement)",
    }),
    submittedAt: time(),
    startedAt: time().nullable().openapi({
      description: 'its first start; a job stopped and started again (requeued, rescaled) keeps it',
    }),
    finishedAt: time().nullable(),
    statEpoch: z.number().int(),
    epochAfterLastTick: z.boolean().optional().openapi({
      description:
        "a running job moved into its statistical epoch (statEpoch, past the first) after the last tick: width is still what that tick gave it for the epoch before, and the plan's width for this one (widths[statEpoch]) is given at the next tick; false otherwise",
    }),
    workDoneSeconds: z.number(),
    reportedProgress: z.boolean().optional().openapi({
      description:
        'whether boa ever took a progress report (POST /v1/jobs/{id}/progress) for the job, from any generation and whatever it said; false for a done job: it finished without saying how far it got, so its statEpoch is where it began. Jobs stored before boa recorded reports (migration 0010) read true, unless they were waiting and never started then',
    }),
    lastReportAt: time().nullable().optional().openapi({
      description:
        'when boa last took a progress report for the job; null: none yet. Not a lease (polling the allocation does not set it). Jobs stored before boa recorded reports (migration 0010) read their submission time',
    }),
    planId: z.number().int().nullable(),
    widths: z.array(z.number().int()).nullable(),
    width: z.number().int().openapi({ description: 'GPUs it runs on now, lentGpus included' }),
    lentGpus: z.number().int().optional().openapi({
      description:
        "of width, the GPUs the idle fill lent beyond its plan's width from idle GPUs of its nodes; not booked against the budget; 0 when none",
    }),
    gpuHours: z.number().nullable().optional().openapi({
      description:
        "GPU-hours booked to the job so far, as the budget's ledger books allocation: its GPUs (lentGpus left out) times the time it held them, from its first placement, through restarts, rescales, restart backoffs and boa's own downtime, until it ended. Not the nodes' whole cost (booting and idle GPUs are paid too: GET /v1/budget). null: a job submitted before boa kept it (migration 0013)",
    }),
    dollars: z.number().nullable().optional().openapi({
      description:
        "gpuHours at the node's price per GPU-hour (the node's hourly price over its GPUs: BOA_NODE_PRICE_PER_HOUR or the instance type's on-demand price); null when no price is known or gpuHours is null",
    }),
    generation: z.number().int(),
    workload: z
      .custom<Workload>((v) => typeof v === 'object')
      .nullable()
      .optional()
      // After nullable(): given before it, the type here would drop the null self-launched jobs answer.
      .openapi({
        type: ['object', 'null'],
        description:
          'what boa runs for the job: the workload given at registration; null for a self-launched job',
      }),
    restarts: z.number().int().optional(),
    exitCode: z.number().int().nullable().optional(),
    failureReason: z.string().nullable().optional(),
    failedRank: z.number().int().nullable().optional().openapi({
      description:
        "the rank whose failure failureReason is (of a failed job, or the last of one restarted): its log, GET /v1/jobs/{id}/logs?rank=N, holds the failure's own words; null when none failed",
    }),
    restartNotBefore: z.string().nullable().optional().openapi({
      description:
        'after a failure, when its replicas start again (the restart backoff); null once that time has come',
    }),
    stopping: z
      .object({
        replicas: z.number().int(),
        gpus: z.number().int(),
        killAt: z.string().nullable(),
      })
      .nullable()
      .optional()
      .openapi({
        description:
          "replicas boa is stopping (a cancel, a rescale, a move) that still run within their grace period (terminationGraceSeconds) before SIGKILL, the GPUs they still hold (no other job's replica starts on those until they are gone), and when SIGKILL comes at the latest (null until the executor has sent the stop); null when none",
      }),
  })
  .openapi('Job');

export const JobListView = z.object({ jobs: z.array(JobView) }).openapi('JobList');

export const RegisteredJobView = z
  .object({
    id: z.number().int(),
    token: z.string().openapi({ description: "the job's own bearer token for its routes" }),
    job: JobView,
    replayed: z.literal(true).optional().openapi({
      description:
        'only on a replay (Idempotency-Key seen before): no new job was created, this is the earlier one',
    }),
    tokenReplaced: z
      .boolean()
      .optional()
      .openapi({
        description:
          "only on a replay. true: a self-launched job's new token (boa keeps only a hash of the first, so it " +
          'cannot repeat it); the earlier token no longer works. false: the token first given (an executed job)',
      }),
    warning: z
      .string()
      .nullable()
      .openapi({
        description:
          'something given that this service accepts but does not use (an image on a local executor), or ' +
          '(since 2026-12-06) that a job registered without a workload is self-launched; null when none',
      }),
  })
  .openapi('RegisteredJob');

export const AllocationView = z
  .object({
    jobId: z.number().int(),
    state: z.string(),
    width: z.number().int(),
    nodes: z.array(z.object({ node: z.string(), gpus: z.number().int() })),
    generation: z.number().int().openapi({ description: 'changes when the job must rescale' }),
    statEpoch: z.number().int(),
    statEpochs: z.number().int().openapi({
      description: "the class's statistical epochs: a progress report takes statEpoch 0 to statEpochs - 1",
    }),
  })
  .openapi('Allocation');
