import { z } from 'zod';
import { DEFAULT_CREDIT } from '../core/credit.ts';
import { DEFAULT_DRAIN } from '../core/exec/drain-widths.ts';
import { QUIET_FILL_SAVED_RESTARTS } from '../core/exec/idle-fill.ts';
import { DEFAULT_PLAN_CAP } from '../core/plan-cap.ts';
import {
  DEFAULT_LONG_WAIT_SECONDS,
  DEFAULT_QUEUE_OVERDUE_HOURS,
  QUEUE_ORDERS,
} from '../core/ceiling-widths.ts';
import { DEFAULT_SPEND_CEILING } from '../core/spend-ceiling.ts';
import { positive } from './config-number.ts';
import { MAX_FIRST_DAY_ARRIVALS, MAX_RATE_CONFIDENCE } from './estimators.ts';
import { DEFAULT_RISE } from './rate-rise.ts';

const FIRST_DAY_ARRIVALS_RANGE = `firstDayArrivals must be between 0 (none) and ${MAX_FIRST_DAY_ARRIVALS} arrivals a class`;
const RATE_CONFIDENCE_RANGE = `rateConfidence must be between 0 (the estimate) and ${MAX_RATE_CONFIDENCE} standard errors`;

/**
 * The settings of boa's planning: the rate estimator (what the plan expects to arrive) and the budget
 * control (what it may spend and when). Defaults are the measured ones (docs/comparison.md).
 */
export const planningSettings = {
  rateWindowHours: positive('rateWindowHours').default(24),
  /** Hours of pseudo-observations the configured prior rates are worth in the rate estimate. */
  priorWeightHours: z.number().nonnegative().default(2),
  /**
   * A fall in a class's estimated rate is planned for at most halving every this many hours (a rise
   * at once: estimators.ts plannedRates); 0: the plan follows every fall at once.
   */
  rateHoldHalfLifeHours: z
    .number({ error: 'rateHoldHalfLifeHours must be a number' })
    .nonnegative('rateHoldHalfLifeHours must be >= 0 (0: no hold)')
    .default(48),
  /**
   * Opt-in: the load is planned at its upper confidence bound, 1 + z / sqrt(arrivals seen) times its
   * estimate (estimators.ts), so a load seen over a few hours gets narrower widths; 0: the estimate.
   */
  rateConfidence: z
    .number({ error: 'rateConfidence must be a number' })
    .min(0, RATE_CONFIDENCE_RANGE)
    .max(MAX_RATE_CONFIDENCE, RATE_CONFIDENCE_RANGE)
    .default(0),
  /**
   * Opt-in: until the rate window is full (a first day), every class is planned as if this many more
   * of its jobs had arrived in the hours observed (estimators.ts withFirstDayArrivals); 0: none.
   */
  firstDayArrivals: z
    .number({ error: 'firstDayArrivals must be a number' })
    .min(0, FIRST_DAY_ARRIVALS_RANGE)
    .max(MAX_FIRST_DAY_ARRIVALS, FIRST_DAY_ARRIVALS_RANGE)
    .default(0),
  /**
   * Rise detection (estimators.ts): the last this many hours are compared with what the rate estimate
   * expects of them, and a rise beyond `rateRiseZ` Poisson standard deviations is planned at its
   * recent level, held through a fall at most halving every as many hours; 0: none.
   */
  rateRiseHours: z
    .number({ error: 'rateRiseHours must be a number' })
    .nonnegative('rateRiseHours must be >= 0 (0: no rise detection)')
    .default(DEFAULT_RISE.hours),
  rateRiseZ: positive('rateRiseZ').default(DEFAULT_RISE.z),
  budgetWindowHours: positive('budgetWindowHours').default(24),
  /** Hours ahead the spend ceiling assumes the nodes are held: debt is repaid within this. */
  budgetHorizonHours: positive('budgetHorizonHours').default(DEFAULT_SPEND_CEILING.horizonHours),
  /** How far above the budget the spend ceiling goes with no debt (a fraction; debt stays below slack x budget x horizon). */
  budgetSlack: z.number().min(0).max(1).default(DEFAULT_SPEND_CEILING.slack),
  /**
   * Windows ending up to this many hours ahead are kept within the budget: the payback of room spent
   * after a lull, due when the lull leaves the window, is spread over this long instead of one horizon.
   * Unset: three horizons (core/spend-ceiling.ts, defaultLookaheadHours).
   */
  budgetLookaheadHours: positive('budgetLookaheadHours').optional(),
  /**
   * Under the spend ceiling a running job keeps a width up to twice its narrowed one (fewer restarts);
   * a job that has waited this long for the budget makes those widths give way (core/ceiling-widths.ts).
   */
  keptWidthWaitMinutes: z
    .number({ error: 'keptWidthWaitMinutes must be a number' })
    .nonnegative('keptWidthWaitMinutes must be >= 0 (0: kept widths never make a job wait)')
    .default(DEFAULT_LONG_WAIT_SECONDS / 60),
  /**
   * The order jobs waiting for the budget start in (core/ceiling-widths.ts waitingOrder): the least
   * expected work left by their class profile first, or in submission order ('submitted': no job is
   * passed, at the price of the short ones' waits behind long ones).
   */
  queueOrder: z
    .enum(QUEUE_ORDERS, { error: `queueOrder must be one of ${QUEUE_ORDERS.join(', ')}` })
    .default('least-work-left'),
  /**
   * A job waiting this long since its submission goes before every job that has waited less, oldest
   * first (core/ceiling-widths.ts waitingOrder): least work left first cannot keep a long job waiting
   * for ever behind a stream of short ones.
   */
  queueOverdueHours: positive('queueOverdueHours').default(DEFAULT_QUEUE_OVERDUE_HOURS),
  /**
   * Opt-in warm-up (core/warmup.ts): for this many hours from the service's first start the plan uses
   * half the budget rising to all of it, banking budget for loads not yet seen; 0: none.
   */
  warmupHours: z
    .number({ error: 'warmupHours must be a number' })
    .nonnegative('warmupHours must be >= 0 (0: no warm-up)')
    .default(0),
  /**
   * Hours without a submission after which, with every job running at its width, the running jobs
   * take the GPUs the budget allows (core/exec/drain-widths.ts); 0: never.
   */
  drainAfterHours: z
    .number({ error: 'drainAfterHours must be a number' })
    .nonnegative('drainAfterHours must be >= 0 (0: never)')
    .default(DEFAULT_DRAIN.afterHours),
  /**
   * A job on one node is widened onto that node's idle GPUs where its profile says the speedup repays
   * the restart (core/exec/idle-fill.ts, as in the simulator); they are paid anyway, so the plan, the
   * node count and the booked allocation stay the plan's. false: jobs run at the plan's widths.
   */
  idleFill: z.boolean({ error: 'idleFill must be true or false' }).default(true),
  /**
   * Once nothing has been submitted for drainAfterHours, the idle fill lends a job, on one node or
   * several, its nodes' idle GPUs where that saves at least this many restarts of its remaining time
   * (QUIET_FILL, the simulator's default too): the last long jobs then run for hours beside idle GPUs
   * the 1.1x rule leaves. 0: the 1.1x rule always.
   */
  quietFillSavedRestarts: z
    .number({ error: 'quietFillSavedRestarts must be a number' })
    .min(0, 'quietFillSavedRestarts must be a number of restarts >= 0 (0: none)')
    .default(QUIET_FILL_SAVED_RESTARTS),
  /**
   * Opt-in: while the budget window (6 hours or more of it) has paid more than this share under its
   * budget and nothing waits, the running jobs take the budget's GPUs by the drain's rule, with no floor
   * on what a GPU adds (core/exec/band-fill.ts); 0: never. For a budget lost if unspent: 0.015 keeps the
   * demo's eight workloads within 3% of it. Off by default: it spends the room bursts borrow.
   */
  fillBelowBand: z
    .number({ error: 'fillBelowBand must be a number' })
    .min(0, 'fillBelowBand must be a share of the budget from 0 (never) to below 1')
    .lt(1, 'fillBelowBand must be a share of the budget from 0 (never) to below 1')
    .default(0),
  /**
   * Half-life of the demand ratio (core/demand-ratio.ts): plans are made with the budget divided by
   * GPU-time allocated over what the plans in force expected, so a burst the online rates read late
   * narrows the next plan; 0: not used. Opt-in: in the simulator it shortens jobs on bursty traces
   * (boa@demand2), but the demo at 40 pays up to 14% under the budget with it (docs/budget-log.md).
   */
  demandHalfLifeHours: z
    .number({ error: 'demandHalfLifeHours must be a number' })
    .nonnegative('demandHalfLifeHours must be >= 0 (0: no demand ratio)')
    .default(0),
  /**
   * The plan is made with at most this many times its load's minimum feasible budget, raised by the
   * window's unspent budget (core/plan-cap.ts; default 2): online rates read low early, and a plan for
   * too few jobs spends the budget on wide, inefficient widths; 0: no cap.
   */
  planCapMultiple: z
    .number({ error: 'planCapMultiple must be a number' })
    .refine((m) => m === 0 || m >= 1, 'planCapMultiple must be 0 (no cap) or >= 1')
    .default(DEFAULT_PLAN_CAP.multiple),
  /** Hours of unspent budget that double the plan's cap (core/plan-cap.ts). */
  planCapRelaxHours: positive('planCapRelaxHours').default(DEFAULT_PLAN_CAP.relaxHours),
  /**
   * While the load needs at least `creditLoadShare` of the budget, plans also spend the window's
   * unspent budget, spread over this many hours (core/credit.ts); 0: never.
   */
  creditSpendHours: z
    .number({ error: 'creditSpendHours must be a number' })
    .nonnegative('creditSpendHours must be >= 0 (0: never)')
    .default(DEFAULT_CREDIT.spendHours),
  /** The share of the budget the load must need for plans to spend all the window's credit (part from 0.2 below). */
  creditLoadShare: positive('creditLoadShare').default(DEFAULT_CREDIT.loadShare),
};

interface PlanningWindows {
  readonly rateWindowHours: number;
  readonly rateRiseHours: number;
  readonly budgetWindowHours: number;
  readonly budgetHorizonHours: number;
  readonly budgetLookaheadHours?: number | undefined;
}

/** Why the planning windows do not hold together, each at the setting to change; none when they do. */
export function planningIssues(c: PlanningWindows): Array<{ path: string[]; message: string }> {
  const issues: Array<{ path: string[]; message: string }> = [];
  if (c.rateRiseHours >= c.rateWindowHours) {
    issues.push({
      path: ['rateRiseHours'],
      message:
        `rateRiseHours must be below rateWindowHours (${c.rateWindowHours}), got ${c.rateRiseHours}: ` +
        'it compares the recent hours with the window',
    });
  }
  if (c.budgetHorizonHours >= c.budgetWindowHours) {
    issues.push({
      path: ['budgetHorizonHours'],
      message:
        `budgetHorizonHours must be below budgetWindowHours (${c.budgetWindowHours}), got ` +
        `${c.budgetHorizonHours}: the spend ceiling holds the window as it will be one horizon from now`,
    });
  }
  const lookahead = c.budgetLookaheadHours;
  if (lookahead !== undefined && (lookahead < c.budgetHorizonHours || lookahead >= c.budgetWindowHours)) {
    issues.push({
      path: ['budgetLookaheadHours'],
      message:
        `budgetLookaheadHours must be at least budgetHorizonHours (${c.budgetHorizonHours}) and below ` +
        `budgetWindowHours (${c.budgetWindowHours}), got ${lookahead}: the spend ceiling ` +
        'checks the windows ending within it',
    });
  }
  return issues;
}
