/**
 * The budget's response bodies (GET and PUT /v1/budget), as src/service/views.ts builds them: the
 * budget's own file, the largest part of responses.ts (which re-exports them).
 */
import { z } from '@hono/zod-openapi';
import { gpuHours, rateWindowFields, time } from './response-parts.ts';
import { QUEUE_ORDERS } from '../core/ceiling-widths.ts';

const Averages = z
  .object({
    hours: z.number().openapi({ description: 'length of the span actually covered' }),
    paidGpuHoursPerHour: gpuHours('paid GPU-hours per hour (nodes running, from launch)'),
    allocatedGpuHoursPerHour: gpuHours(
      "GPU-hours per hour allocated to jobs at their plan's widths; GPUs the idle fill lends them are run but not counted",
    ),
  })
  .openapi('Averages');

const BudgetControl = z
  .object({
    ceilingGpus: z.number().nullable().openapi({ description: 'paid GPUs the budget window allows now' }),
    ceilingNodes: z.number().int().nullable(),
    heartbeatHoldNodes: z.number().int().nullable().openapi({
      description:
        "the budget guard's size boa holds itself to while its heartbeat does not reach CloudWatch (config guardMinutes); null: no hold",
    }),
    debtGpuHours: z.number().nullable().openapi({
      description:
        'paid above the budget in the window the ceiling counts: its last budgetWindowHours - horizonHours hours, or since a budget was first set (negative: room)',
    }),
    horizonHours: z.number(),
    lookaheadHours: z.number().openapi({
      description:
        'the ceiling keeps every budget window ending up to this many hours ahead within the budget (budgetLookaheadHours; unset: three horizons)',
    }),
    planningBudget: z.number().nullable().openapi({ description: 'the budget given to the calculator' }),
    warmupFactor: z.number().openapi({
      description:
        'the fraction of the budget planned with now: below 1 during the opt-in warm-up (warmupHours)',
    }),
    planCapGpuHoursPerHour: z.number().nullable().openapi({
      description:
        'the most budget a plan is made with: planCapMultiple x what the load needs, raised as the window leaves budget unspent; null: no cap',
    }),
    creditGpuHoursPerHour: z.number().openapi({
      description:
        "what plans get on top of the budget from the window's unspent budget (since the last budget change, when later), spread over creditSpendHours, while the load needs at least creditLoadShare of the budget (a proportional part from 0.2 below it); 0: none",
    }),
    rateConfidenceFactor: z.number().openapi({
      description:
        "what the opt-in confidence bound (rateConfidence) multiplies the load's estimated rates by now: 1 + z / sqrt(arrivals seen); 1: off",
    }),
    rateRiseFactor: z.number().openapi({
      description:
        "what rise detection (rateRiseHours) multiplies the load's estimated rates by now: the last hours' level over the window's, where they are a step up; 1: no rise",
    }),
    demandRatio: z.number().openapi({
      description:
        'what the plan in force divided its budget by for the opt-in demand ratio (demandHalfLifeHours): GPU-time allocated over what the plans in force expected; 1: off, or plans allocated no more than expected',
    }),
    firstDayJobsPerHour: z.number().openapi({
      description:
        "jobs per hour the opt-in first-day arrivals (firstDayArrivals) add to the planned rate of every class without a configured prior rate now: firstDayArrivals over the hours observed and the prior's, until the rate window is full; 0: off or the window full",
    }),
    rateWindow: z
      .object({
        ...rateWindowFields(),
        plannedAtZero: z.array(z.string()).openapi({
          description:
            'classes without a configured prior rate that plans give no budget now: none of their jobs is in the window (on a first day, the classes not seen yet)',
        }),
      })
      .openapi({ description: 'the arrivals the plan is made from' }),
    queuedForBudget: z.number().int().openapi({ description: 'jobs waiting for the budget' }),
    queueOrder: z.enum(QUEUE_ORDERS).openapi({
      description:
        'the order they start in (config queueOrder): least-work-left (least expected work left by the class profile first) or submitted (oldest first)',
    }),
    draining: z.boolean().openapi({
      description:
        'no submission for drainAfterHours and nothing waits: the running jobs take the GPUs the budget allows',
    }),
    fillingToBudget: z.boolean().openapi({
      description:
        'the budget window paid more than fillBelowBand under the budget (opt-in) and nothing waits: the running jobs take the GPUs the budget allows',
    }),
    loadNeedsGpuHoursPerHour: gpuHours(
      'what the current load would need allocated to its jobs (the cheapest plan for the expected arrivals and the jobs waiting)',
    ),
    loadNeedsPaidGpuHoursPerHour: gpuHours(
      "the budget the current load would need: loadNeedsGpuHoursPerHour at the window's paid/allocated overhead",
    ),
    loadNeedsAsOf: z.string().optional().openapi({
      description:
        'when the load needs were computed: with large profiles a moment behind a change of the load while the calculator computes them anew',
    }),
    belowBudget: z
      .object({
        gpus: z.number().openapi({
          description:
            'GPUs paid below the budget now (the budget less the GPUs of the nodes paid for); 0 at or above it',
        }),
        waitingGpus: z.number().openapi({
          description: 'all of them while a job waits (for the budget, nodes or a plan); 0 otherwise',
        }),
        usableGpus: z.number().openapi({
          description:
            "GPUs running jobs could take at half a GPU's speedup per GPU or better (their class profile), beyond the idle GPUs paid for: the plan does not buy them at the budget's price, or the ceiling holds them back",
        }),
        unusableGpus: z.number().openapi({
          description: 'the rest: GPUs no job present can use at that rate',
        }),
      })
      .openapi({
        description:
          'why the cluster pays less than the budget now (the split `simulate --unspent` gives over a run); the three parts add up to gpus',
      }),
  })
  .openapi('BudgetControl');

export const BudgetView = z
  .object({
    gpuHoursPerHour: z.number().nullable().openapi({ description: 'the budget; null when none is set' }),
    setAt: time().nullable(),
    window: Averages.extend({
      windowHours: z.number(),
      budgetGpuHoursPerHour: z.number().nullable().openapi({
        description:
          "the budgets in force over the window's hours, time-averaged (each for the hours it was in force): what the window's paid average is held to, the budget itself while it has not changed; null: no budget",
      }),
      backWithinBudget: z
        .object({
          at: time().nullable().openapi({
            description:
              "when the window's paid average is back within its budget and stays so, if the paid rate stays as it is now (paidGpusNow) and the budget too: old spend leaves the sliding window; null: not at the current rate (paidGpusNow is above the budget)",
          }),
          paidGpusNow: z.number().openapi({
            description:
              'the GPUs paid now and those booting (paid from their launch once running): the rate assumed',
          }),
        })
        .nullable()
        .openapi({
          description: "null while the window's paid average is within its budget, or with no budget",
        }),
      allocatedByClass: z
        .array(
          z.object({
            className: z.string().nullable().openapi({
              description: 'the job class; null: GPUs of ledger samples from before boa kept classes',
            }),
            gpuHours: z.number().openapi({ description: "the class's allocated GPU-hours in the window" }),
            gpuHoursPerHour: gpuHours('the same over the hours the window covers'),
            share: z.number().openapi({ description: "of the window's allocated GPU-hours, 0 to 1" }),
          }),
        )
        .openapi({
          description:
            "where the window's allocated GPU-hours went, by job class, most first: they add up to allocatedGpuHoursPerHour (GPUs the idle fill lends are not counted, as there)",
        }),
    }),
    sinceSet: Averages.extend({
      budgetGpuHoursPerHour: z.number().openapi({
        description:
          'what the paid average since set is held to: the budget, at most the GPUs the node group could run when it was set',
      }),
    })
      .nullable()
      .openapi({
        description:
          'since the budget was set, or over the ledger rows kept (the longest window plus a day) when it was set before them',
      }),
    dollarsPerMonth: z.number().nullable().openapi({
      description:
        "the budget in dollars per 730-hour month, at most the node group's maximum GPUs (maxGpus: a budget above it can never spend the rest); null without a budget or a known node price",
    }),
    paidDollarsPerMonth: z.number().nullable().openapi({
      description: "the window's paid average in dollars per month; null without a known node price",
    }),
    instanceType: z.string(),
    nodePricePerHour: z.number().nullable().openapi({
      description:
        "dollars per node-hour: the configured nodePricePerHour, else the instance type's on-demand price in us-east-1; null when neither is known",
    }),
    maxGpus: z.number().int().nullable().openapi({
      description:
        "the most GPUs boa can pay for at once: the node group's maximum nodes (or maxNodes, if lower) times GPUs per node; a budget above it can never be spent. null while the group's maximum is not known yet",
    }),
    accepted: z
      .object({
        min: z.number().openapi({
          description:
            'the smallest budget PUT /v1/budget accepts: what one job of the cheapest class needs on whole nodes',
        }),
        max: z.number().openapi({ description: 'the largest budget PUT /v1/budget accepts' }),
      })
      .openapi({ description: 'the budgets PUT /v1/budget accepts' }),
    control: BudgetControl.nullable(),
  })
  .openapi('BudgetStatus');

export const BudgetSetView = BudgetView.extend({
  minFeasibleBudget: z.number().openapi({ description: "the plan's minimum feasible budget" }),
  minFeasiblePaidBudget: z.number().openapi({
    description:
      "the same as a budget: paid, at the budget window's paid/allocated overhead (a budget below it queues jobs)",
  }),
  plan: z
    .object({
      id: z.number().int(),
      predictedGpuHoursPerHour: gpuHours('what the plan allocates'),
      predictedAvgJctSeconds: z.number(),
      ratesPerHour: z.record(z.string(), z.number()),
    })
    .nullable()
    .openapi({ description: 'the plan made for this budget; null if it could not be computed' }),
  warning: z.string().nullable().optional(),
}).openapi('BudgetSet');
