/**
 * Response bodies, as src/service/views.ts builds them, so /openapi.json describes every field and a
 * client can be generated from it. test/api/responses.test.ts parses real responses with these and
 * checks no field goes undeclared: a field added to a view must be described here too.
 */
import { z } from '@hono/zod-openapi';

import { described, rateWindowFields, time } from './response-parts.ts';
export { BudgetSetView, BudgetView } from './responses-budget.ts';
export { AllocationView, JobListView, JobView, RegisteredJobView } from './responses-jobs.ts';

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
                samplesInstanceType: z.string(),
                samplesOtherInstanceTypes: z.record(z.string(), z.number().int()),
              }),
            ),
          })
          .openapi({
            description:
              "what the plan reads: each epoch's work blended with its jobs' samples and its speedups, " +
              "the profile's or learned from the widths the samples ran at; samples: trusted ones by width, " +
              'measured on samplesInstanceType (the type configured); samplesOtherInstanceTypes: those kept ' +
              'from other instance types, not read until the node group is of that type again',
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
