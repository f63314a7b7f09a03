import { setTimeout as sleep } from 'node:timers/promises';
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { frontierChart } from '../../charts/frontier-chart.ts';
import { currentFrontier } from '../../service/frontier.ts';
import { budgetWarning } from '../../service/budget.ts';
import { ServiceError } from '../../service/errors.ts';
import type { BoaService } from '../../service/service.ts';
import { statusView } from '../../service/status-view.ts';
import { budgetView, planView, rateWindowView } from '../../service/views.ts';
import { requireOperator } from '../auth.ts';
import { budgetRefused } from './budget-refused.ts';
import { joinWarnings, supersededBy } from './budget-superseded.ts';
import type { ApiEnv } from '../env.ts';
import { BudgetSetView, BudgetView, FrontierView, PlanView, StatusView } from '../responses.ts';
import {
  bodyErrors,
  BudgetBody,
  ErrorSchema,
  errors,
  FrontierQuery,
  jsonBody,
  jsonContent,
} from '../schemas.ts';

export function operatorRoutes(app: OpenAPIHono<ApiEnv>) {
  app.openapi(
    createRoute({
      method: 'put',
      path: '/v1/budget',
      operationId: 'setBudget',
      summary:
        'Set the budget (GPU-hours per hour, time-average); below the minimum for the estimated load it is ' +
        'accepted with a warning (jobs queue), as is one above maxGpus (never spent); refused only below ' +
        'one job of the cheapest class',
      request: jsonBody(BudgetBody),
      responses: {
        200: jsonContent(BudgetSetView, 'the budget, how spending tracks it, and the plan made for it'),
        ...bodyErrors,
        400: jsonContent(
          ErrorSchema,
          'invalid input; the error names the field, and a value that is no budget (0, -5, "abc") the smallest accepted budget, in minFeasibleBudget too',
        ),
        422: jsonContent(
          ErrorSchema,
          'below what one job of the cheapest class needs, which the error states',
        ),
      },
    }),
    async (c) => {
      requireOperator(c);
      const service = c.var.service;
      const { budget, minFeasibleBudget } = service.setBudget(c.req.valid('json').gpuHoursPerHour);
      // Answer with the plan made for this budget, so the minimum and the spend shown here are the
      // ones `GET /v1/plan` shows (the calculator takes milliseconds). Not past PLAN_WAIT_MS: a hung
      // computation (bounded only by the worker's timeout, minutes) held the answer with it (found in
      // review); the budget is set either way, and the answer then has no plan.
      await planned(service);
      const current = planView(service);
      const plan = current && current.budget === budget.gpuHoursPerHour ? current : null;
      const minimum = plan?.minFeasibleBudget ?? minFeasibleBudget;
      const overhead = service.overheadRatio();
      // Worded again from the figures answered beside it: setBudget's read the load needs kept from before
      // the plan, and its figure differed from the minimum shown (found in review: 8.138 below 8.392).
      const own = budgetWarning(service, budget.gpuHoursPerHour, minimum, overhead);
      const warning = joinWarnings(own, supersededBy(service, budget));
      if (warning)
        service.deps.logger.warn(
          { event: 'budget_warning', gpuHoursPerHour: budget.gpuHoursPerHour, warning },
          warning,
        );
      return c.json(
        {
          ...budgetView(service),
          minFeasibleBudget: minimum,
          // The same as a budget (paid), as GET /v1/frontier gives it: the figure the budget is compared with.
          minFeasiblePaidBudget: minimum * overhead,
          warning,
          plan: plan && {
            id: plan.id,
            predictedGpuHoursPerHour: plan.predicted.gpuHoursPerHour,
            predictedAvgJctSeconds: plan.predicted.avgJctSeconds,
            ratesPerHour: (plan.inputs as { ratesPerHour?: Record<string, number> }).ratesPerHour ?? {},
          },
        },
        200,
      );
    },
    budgetRefused,
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/budget',
      operationId: 'getBudget',
      summary: 'The budget, paid and allocated time-averages, and $ per month',
      responses: { 200: jsonContent(BudgetView, 'budget'), ...errors },
    }),
    (c) => {
      requireOperator(c);
      return c.json(budgetView(c.var.service), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/plan',
      operationId: 'getPlan',
      summary: 'The current plan: widths per class and epoch, predictions, solver, inputs',
      responses: {
        200: jsonContent(PlanView, 'plan'),
        ...errors,
        404: jsonContent(ErrorSchema, 'no plan yet'),
      },
    }),
    (c) => {
      requireOperator(c);
      const plan = planView(c.var.service);
      if (!plan) throw new ServiceError(404, 'no_plan', 'no plan yet: set a budget first');
      return c.json(plan, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/plan/recompute',
      operationId: 'recomputePlan',
      summary: 'Recompute the plan now from the current estimates',
      responses: {
        200: jsonContent(PlanView, 'the new plan'),
        ...errors,
        409: jsonContent(ErrorSchema, 'no budget'),
        503: jsonContent(ErrorSchema, 'the calculator failed; the error says why'),
      },
    }),
    async (c) => {
      requireOperator(c);
      if (!c.var.service.state.budget)
        throw new ServiceError(409, 'no_budget', 'set a budget before computing a plan');
      const service = c.var.service;
      const before = service.state.plan?.row.id;
      const asked = service.planner.request('operator');
      await planned(service);
      // Its own computation's plan (settled by now unless still computing). Undefined: it failed, or a
      // budget or profile change superseded it and the plan for that is the one in force.
      const made = await Promise.race([asked, Promise.resolve(undefined)]);
      const plan = planView(service);
      const failed = made === undefined && service.planner.lastError !== undefined;
      // No plan made for it: it answered 200 with the old one, or with a timer's plan that landed just
      // before its own computation failed (found in review).
      if (!plan || plan.id === before || failed) {
        const why =
          service.planner.computingSince !== undefined
            ? `the calculator is still computing after ${PLAN_WAIT_MS / 1000} s`
            : `the calculator failed: ${service.planner.lastError ?? 'no plan was made'}`;
        throw new ServiceError(503, 'plan_failed', `${why}; this request made no plan`);
      }
      return c.json(plan, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/frontier',
      operationId: 'getFrontier',
      summary: 'The cost/JCT frontier for the current estimates (JSON, or an SVG chart)',
      request: { query: FrontierQuery },
      responses: {
        200: {
          description: 'frontier vertices; format=svg answers the chart as image/svg+xml',
          content: {
            'application/json': { schema: FrontierView },
            'image/svg+xml': { schema: z.string().openapi({ description: 'the chart (format=svg)' }) },
          },
        },
        ...errors,
        503: jsonContent(
          ErrorSchema,
          'frontier_pending: the frontier is still being computed (large profiles); asked again, it answers once done',
        ),
      },
    }),
    async (c) => {
      requireOperator(c);
      const service = c.var.service;
      // The load the plan is made for (arrivals plus the jobs waiting), so the plan's point lies on this
      // frontier and its minimum is the load needs of `boa status`.
      const { estimates, vertices, at } = await frontierWithin(service, FRONTIER_WAIT_MS);
      const plan = planView(service);
      const budget = service.state.budget?.gpuHoursPerHour ?? null;
      // A quiet day empties the rate window: then there were arrivals, only not lately (found in review).
      const submittedAt = service.state.lastSubmittedAt;
      const planPoint = plan && {
        gpuHoursPerHour: plan.predicted.gpuHoursPerHour,
        avgJctSeconds: plan.predicted.avgJctSeconds,
      };
      if (c.req.valid('query').format === 'svg') {
        const svg = await frontierChart(
          [{ solver: 'exact', points: vertices }],
          vertices[0]?.gpuHoursPerHour ?? 0,
          // No arrivals: every class at a negligible rate, budgets of ten-thousandths of a GPU; `boa
          // frontier` says so in words, the chart in its title (found in a team lead's trial).
          Object.values(estimates.ratesPerHour).some((rate) => rate > 0)
            ? 'What each budget buys, as the model predicts (no queueing; current estimates)'
            : submittedAt === undefined
              ? 'No arrivals yet: a frontier of no load (boa history import, or prior rates)'
              : 'No arrivals in the rate window: a frontier of no load (boa history import, or prior rates)',
          // The frontier's GPU-hours are allocated to jobs, the plan's; the budget pays for more (whole
          // nodes, boot), so a plan sits left of the budget it pays for (found in a team lead's trial).
          {
            budget,
            plan: planPoint,
            xTitle: 'GPU-hours per hour allocated to jobs (the budget also pays idle GPUs)',
          },
        );
        return c.body(svg, 200, { 'content-type': 'image/svg+xml' }) as never;
      }
      return c.json(
        {
          ratesPerHour: estimates.ratesPerHour,
          minFeasibleBudget: vertices[0]?.gpuHoursPerHour ?? null,
          // The same as a budget (paid): the one `budget` is compared with.
          minFeasiblePaidBudget:
            vertices[0] === undefined ? null : vertices[0].gpuHoursPerHour * service.overheadRatio(),
          budget,
          plan: planPoint,
          vertices,
          rateWindow: rateWindowOf(service),
          lastSubmittedAt: submittedAt === undefined ? null : new Date(submittedAt).toISOString(),
          computedAt: new Date(at).toISOString(),
        },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/status',
      operationId: 'getStatus',
      summary: 'Node group, GPUs allocated and paid, jobs by state',
      responses: { 200: jsonContent(StatusView, 'status'), ...errors },
    }),
    (c) => {
      requireOperator(c);
      return c.json(statusView(c.var.service), 200);
    },
  );
}

/** The rate window as GET /v1/budget gives it, without the classes planned at 0 (the budget's part). */
function rateWindowOf(service: BoaService) {
  const { observedHours, windowHours } = rateWindowView(service, service.deps.clock.now());
  return { observedHours, windowHours };
}

/**
 * How long GET /v1/frontier waits for the frontier (milliseconds for most profiles, up to a minute for
 * the largest): within the CLI's 120 s, and a dashboard's refresh is not held longer.
 */
const FRONTIER_WAIT_MS = 30_000;

/** The current frontier (service/frontier.ts), or a 503 past `waitMs`: the computation goes on. */
async function frontierWithin(service: BoaService, waitMs: number) {
  const done = new AbortController();
  const timeout = sleep(waitMs, undefined, { ref: false, signal: done.signal }).then(
    () => undefined,
    () => undefined,
  );
  try {
    const frontier = await Promise.race([currentFrontier(service), timeout]);
    if (frontier) return frontier;
  } finally {
    done.abort();
  }
  throw new ServiceError(
    503,
    'frontier_pending',
    `the frontier for the current estimates is still being computed after ${waitMs / 1000} s (large ` +
      'profiles take up to a minute): ask again shortly; once computed it answers at once for a minute',
  );
}

/** How long an answer waits for the plan it asked for (computations take milliseconds to seconds). */
const PLAN_WAIT_MS = 30_000;

/** The planner idle, or PLAN_WAIT_MS gone by (the timer cleared either way). */
async function planned(service: BoaService): Promise<void> {
  const done = new AbortController();
  const timeout = sleep(PLAN_WAIT_MS, undefined, { ref: false, signal: done.signal }).catch(() => undefined);
  try {
    await Promise.race([service.planner.idle(), timeout]);
  } finally {
    done.abort();
  }
}
