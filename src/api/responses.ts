/**
 * Response bodies, as src/service/views.ts builds them, so /openapi.json describes every field and a
 * client can be generated from it. test/api/responses.test.ts parses real responses with these and
 * checks no field goes undeclared: a field added to a view must be described here too.
 */
import { z } from '@hono/zod-openapi';
import type { Workload } from '../service/ports.ts';

import { described, rateWindowFields, time } from './response-parts.ts';
export { BudgetSetView, BudgetView } from './responses-budget.ts';

const Share = z
  .object({
    share: z.number().openapi({ description: 'fraction of arriving jobs given these widths' }),
    widths: z.array(z.number().int()).readonly().openapi({ description: 'GPUs per statistical epoch' }),
  })
  .readonly()
  .openapi('PlanShare');

export const PlanView = z
  .object({
    id: z.number().int(),
    computedAt: time(),
    solver: z.string(),
    budget: z.number(),
    planningBudget: z.number(),
    minFeasibleBudget: z.number().openapi({
      description: "the cheapest plan at the plan's rates: GPU-hours per hour allocated to jobs",
    }),
    minFeasiblePaidBudget: z.number().openapi({
      description:
        "the same as a budget: paid, at the budget window's paid/allocated overhead now (since 2026-12-06)",
    }),
    predicted: z.object({ avgJctSeconds: z.number(), gpuHoursPerHour: z.number() }),
    solveMs: z.number(),
    widths: z.record(z.string(), z.array(Share).readonly()).readonly().openapi({ description: 'by class' }),
    inputs: z.unknown().openapi({
      type: 'object',
      description: 'what the plan was computed from: rates, budgets, work estimates',
    }),
  })
  .openapi('Plan');

const Vertex = z
  .object({ gpuHoursPerHour: z.number(), avgJctSeconds: z.number() })
  .catchall(z.unknown())
  .openapi('FrontierVertex');

export const FrontierView = z
  .object({
    ratesPerHour: z.record(z.string(), z.number()).openapi({
      description:
        'jobs per hour by class the plan is made for: the estimated arrivals plus the jobs waiting, spread over one budget window',
    }),
    minFeasibleBudget: z.number().nullable().openapi({
      description: "the first vertex: GPU-hours per hour allocated to jobs, the frontier's axis",
    }),
    minFeasiblePaidBudget: z.number().nullable().openapi({
      description:
        "the same as a budget: paid, at the budget window's paid/allocated overhead (a budget below it queues jobs)",
    }),
    budget: z.number().nullable(),
    plan: z.object({ gpuHoursPerHour: z.number(), avgJctSeconds: z.number() }).nullable(),
    vertices: z.array(Vertex),
    rateWindow: z.object(rateWindowFields()).openapi({
      description:
        'how much of the rate window the rates are read from: a first hour moves the whole frontier',
    }),
    lastSubmittedAt: z.string().nullable().optional().openapi({
      description:
        'the latest submission, ended jobs included (null: none yet); with every rate 0 it tells a service with no jobs yet from one whose rate window has seen none lately',
    }),
    computedAt: z.string().optional().openapi({
      description:
        'when this frontier was computed: one computed for the same load answers for up to a minute (large profiles take up to a minute to compute)',
    }),
  })
  .openapi('Frontier');

export const StatusView = z
  .object({
    cloud: z.string(),
    executor: z
      .enum(['local', 'kubernetes'])
      .nullable()
      .optional()
      .openapi({ description: 'what runs submitted commands; null: none (a workload is refused)' }),
    nodeGroup: z
      .object({
        minSize: z.number().int().nullable(),
        maxSize: z.number().int().nullable(),
        desiredNodes: z.number().int().nullable(),
        lastResize: z.object({ target: z.number().int(), status: z.string(), at: time() }).nullable(),
        actualNodes: z.number().int().nullable().openapi({
          description:
            'nodes listed at the last tick; null: the pool has not answered a listing since boa started (it then changes no job and no node)',
        }),
        readyNodes: z.number().int().nullable().openapi({
          description: 'nodes listed at the last tick that are ready for jobs, those boa is removing apart',
        }),
        removingNodes: z.number().int().nullable().openapi({
          description:
            'nodes listed at the last tick that boa is removing (chosen, cordoned, terminated and still listed): paid until gone, given no jobs. actualNodes = readyNodes + removingNodes + the notReady counts',
        }),
        name: z.string().nullable(),
        status: z.string().nullable(),
        updateInFlight: z.string().nullable().openapi({
          description:
            "boa's own node group update still running (EKS): no other resize is sent until it ends",
        }),
        issues: z.array(z.unknown()).readonly(),
        notReady: z
          .record(z.string(), z.number().int())
          .openapi({ description: 'nodes not ready, by reason' }),
        replaced: z
          .array(z.object({ name: z.string(), nodes: z.number().int(), paidGpus: z.number().int() }))
          .readonly()
          .openapi({
            description:
              "node groups replaced (an instance-type change) whose nodes still run: paid and within the budget's ceiling until they are gone, given no new jobs",
          }),
        removing: z.array(z.unknown()).readonly(),
        lastRemoval: z.object({ node: z.string(), reason: z.string(), at: time() }).nullable().openapi({
          description: 'the latest node boa terminated: scale-in removes nodes, it sends no resize',
        }),
        capacity: described('capacity backoff, when instances fail to launch').nullable(),
        waitingReason: z.string().nullable(),
      })
      .partial({
        name: true,
        status: true,
        updateInFlight: true,
        issues: true,
        notReady: true,
        replaced: true,
        removingNodes: true,
        removing: true,
        lastRemoval: true,
        capacity: true,
        waitingReason: true,
      }),
    gpus: z.object({
      allocated: z.number().int().openapi({
        description:
          "GPUs jobs run on for their plan's widths, as the ledger, GET /v1/budget and CloudWatch's AllocatedGpuHoursPerHour count them",
      }),
      lent: z.number().int().optional().openapi({
        description:
          'GPUs jobs run on beyond their widths, lent by the idle fill from idle GPUs of their nodes (paid anyway): not counted as allocated',
      }),
      paid: z.number().int().openapi({
        description:
          'GPUs of the nodes billed now; before the pool answers a listing after a start, those the ledger still books as paid',
      }),
    }),
    jobs: z.record(z.string(), z.number().int()).openapi({ description: 'jobs by state' }),
    budget: z
      .object({
        gpuHoursPerHour: z.number(),
        loadNeedsGpuHoursPerHour: z.number().openapi({ description: 'GPU-hours per hour allocated to jobs' }),
        loadNeedsPaidGpuHoursPerHour: z
          .number()
          .openapi({ description: "the same as a budget: paid, at the window's paid/allocated overhead" }),
        loadNeedsAsOf: z.string().optional().openapi({
          description:
            'when the load needs were computed: for large profiles a moment behind while computed anew',
        }),
        queuedForBudget: z.number(),
        draining: z.boolean(),
        fillingToBudget: z.boolean(),
      })
      .nullable()
      .optional(),
    planId: z.number().int().nullable(),
    plannerError: z.string().nullable(),
    executorError: z.object({ message: z.string(), since: time() }).nullable().openapi({
      description:
        "the executor's reconciles fail (jobs neither start nor stop): the last error, and since when; null once one succeeds",
    }),
    classesLeftOut: z
      .object({ classes: z.array(z.string()).readonly(), message: z.string() })
      .nullable()
      .optional()
      .openapi({
        description:
          '(since 2026-12-06) stored classes whose speedup tables pass the bound (a data dir from before it), left out of plans until put again smaller or deleted; the message says how. null when none',
      }),
    plannerComputingSince: time().nullable().openapi({
      description: 'when the plan computation running now started; null when none runs',
    }),
    lastTickAt: time().nullable(),
    lastTickMs: z.number(),
    tickSeconds: z.number().openapi({
      description: 'the scheduling tick: a lastTickAt several ticks old means ticks are failing',
    }),
  })
  .openapi('Status');

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

export const ClassListView = z
  .object({
    classes: z.array(
      z.object({
        name: z.string(),
        priorRatePerHour: z.number().nullable().optional(),
        profile: described('one class of the profile file format (version 1)'),
        inUse: z
          .object({
            epochs: z.array(
              z.object({
                workSeconds: z.number(),
                speedup: z.record(z.string(), z.number()),
                speedupLearned: z.boolean(),
                samples: z.record(z.string(), z.number().int()),
              }),
            ),
          })
          .openapi({
            description:
              "what the plan reads: each epoch's work blended with its jobs' samples and its speedups, " +
              "the profile's or learned from the widths the samples ran at; samples: trusted ones by width",
          }),
      }),
    ),
  })
  .openapi('ClassList');

const dips = z.array(z.string()).openapi({ description: 'where a speedup falls as the width grows' });
export const ClassSavedView = z.object({ saved: z.string(), dips }).openapi('ClassSaved');
export const ClassDeletedView = z.object({ deleted: z.string() }).openapi('ClassDeleted');
export const ClassValidView = z
  .object({ valid: z.boolean(), name: z.string(), epochs: z.number().int(), dips })
  .openapi('ClassValid');

const HistoryImportView = z
  .object({
    id: z.number().int(),
    source: z.string(),
    observedFrom: z.string(),
    firstArrivalAt: z.string(),
    lastArrivalAt: z.string(),
    arrivals: z.number().int(),
    importedAt: z.string(),
  })
  .openapi('HistoryImportRecord');

export const HistoryImportedView = z
  .object({
    import: HistoryImportView,
    alreadyImported: z.boolean(),
    leftOut: z
      .number()
      .int()
      .openapi({ description: 'arrivals older than the rate estimator reads, not kept' }),
  })
  .openapi('HistoryImported');

export const HistoryView = z
  .object({
    recordStartedAt: z
      .string()
      .openapi({ description: "when the service's own record of submissions began" }),
    observedSince: z.string().openapi({ description: "where the rate estimator's observation starts" }),
    imports: z.array(HistoryImportView),
  })
  .openapi('History');

export const HistoryDeletedView = z.object({ deleted: HistoryImportView }).openapi('HistoryDeleted');

export const HistoryArrivalsView = z
  .object({
    since: z.string().openapi({ description: 'the start of what the rate estimator reads' }),
    arrivals: z.array(z.object({ className: z.string(), submittedAt: z.string() })),
  })
  .openapi('HistoryArrivals');
