/**
 * boa: the budget-optimal fixed-width plan from the calculators (BOA.md), executed tick by tick.
 * Options: budget (required: paid GPU-hours per hour, time-average), solver exact|paper (default
 * exact), rates online|prior|oracle (default online: estimated from arrivals with the service's
 * estimator; prior: the same estimator starting from the trace's own rates, as the demo's --prior trace;
 * oracle: the trace's own rates, which no other policy and no service has), warmupHours (default 0: the
 * service's opt-in warm-up, core/warmup.ts), drainAfterHours (default 2, 0: never: the service's drain,
 * core/exec/drain-widths.ts), fillBelowBand (default 0: never; the service's opt-in fill toward the
 * budget while the window pays more than that share under it, core/exec/band-fill.ts),
 * planCapMultiple (default 2, 0: none; the service's cap on the plan's budget relative to its load,
 * core/plan-cap.ts), creditSpendHours (default 4, 0: never; the service's
 * spending of the window's unspent budget while the load needs most of the budget, core/credit.ts),
 * rateConfidence (default 0: the estimate; the service's opt-in upper confidence bound on online rates,
 * src/service/estimators.ts), priorRatesPerHour (the online estimator's prior, the service's priorRates,
 * from somewhere other than the trace: `compare --prior-from`), history (submissions the estimator holds
 * before the trace: `compare --history`), rateRiseHours (default 2, 0: none; the service's rise
 * detection, src/service/rate-rise.ts), firstDayArrivals (default 0: none; the service's opt-in
 * first-day arrivals, src/service/estimators.ts), queueOrder (default least-work-left, or submitted: the
 * service's queue for the budget, core/ceiling-widths.ts), queueOverdueHours (default 24: a job waiting
 * that long goes first), quietFillSavedRestarts (default 20, 0: none; the service's: once no job has
 * arrived for the drain's hours, the idle fill by time saved, jobs on several nodes too,
 * core/exec/idle-fill.ts; `boa@fillqK`) and fillSavedRestarts (simulator only, `boa@fillK`: that rule
 * always).
 */
import { BudgetTooLowError } from '../../../core/calc/errors.ts';
import type { PolicyContext, PolicyDefinition, PolicyOptions } from '../../policy.ts';
import { DEFAULT_BUDGET_CONTROL } from './budget-control.ts';
import { DEFAULT_ONLINE_RATES } from './online-rates.ts';
import { DEFAULT_RISE, riseOptions } from '../../../service/rate-rise.ts';
import { DEFAULT_FILL, QUIET_FILL } from '../../../core/exec/idle-fill.ts';
import { DEFAULT_SPEND_CEILING } from '../../../core/spend-ceiling.ts';
import { RELOCK_FACTOR } from '../../../core/shares.ts';
import { warmupOptions } from '../../../core/warmup.ts';
import { DEFAULT_DRAIN } from '../../../core/exec/drain-widths.ts';
import { bandFillOptions } from '../../../core/exec/band-fill.ts';
import { DEFAULT_PLAN_CAP, planCapOptions } from '../../../core/plan-cap.ts';
import { creditOptions, DEFAULT_CREDIT } from '../../../core/credit.ts';
import { MAX_FIRST_DAY_ARRIVALS, MAX_RATE_CONFIDENCE } from '../../../service/estimators.ts';
import { DEFAULT_QUEUE_OVERDUE_HOURS, QUEUE_ORDERS, type QueueOrder } from '../../../core/ceiling-widths.ts';
import { BoaPlanner } from './planner.ts';
import { BoaPolicy } from './policy.ts';
import type { BoaSettings } from './settings.ts';

export class BoaOptionsError extends Error {
  override name = 'BoaOptionsError';
}

export const BOA_DEFAULTS: Omit<BoaSettings, 'budget'> = {
  solver: 'exact',
  rates: 'online',
  replanSeconds: 15 * 60,
  replanThreshold: 0.01,
  minReplanSeconds: 5 * 60,
  provisionLeadSeconds: 150,
  onlineRates: DEFAULT_ONLINE_RATES,
  control: DEFAULT_BUDGET_CONTROL,
  relockFactor: RELOCK_FACTOR,
  fill: DEFAULT_FILL,
  quietFill: QUIET_FILL,
  ceiling: DEFAULT_SPEND_CEILING,
  budgetWindowHours: 24,
  warmup: null,
  drain: DEFAULT_DRAIN,
  bandFill: null,
  planCap: DEFAULT_PLAN_CAP,
  credit: DEFAULT_CREDIT,
  price: null,
  clearHalfLifeHours: null,
  queueOrder: 'least-work-left',
  queueOverdueHours: DEFAULT_QUEUE_OVERDUE_HOURS,
};

/** Checks the options; with oracle rates, a budget below the minimum feasible one is refused up front. */
export function boaSettings(context: PolicyContext, options: PolicyOptions): BoaSettings {
  const { budget } = options;
  if (budget === undefined || !(Number.isFinite(budget) && budget > 0)) {
    throw new BoaOptionsError(
      `boa needs a budget: a positive number of paid GPU-hours per hour (time-average), got ${budget}`,
    );
  }
  const solver = options.solver ?? BOA_DEFAULTS.solver;
  if (solver !== 'exact' && solver !== 'paper') {
    throw new BoaOptionsError(`boa solver must be exact or paper, got "${solver}"`);
  }
  const rates = options.rates ?? BOA_DEFAULTS.rates;
  if (rates !== 'online' && rates !== 'prior' && rates !== 'oracle') {
    throw new BoaOptionsError(
      `boa rates must be online, prior (online from the trace's rates) or oracle (the trace's rates), got "${rates}"`,
    );
  }
  if (rates === 'oracle') {
    const minimum = new BoaPlanner(context.profiles, solver, context.seed).minFeasible(
      context.traceRatesPerHour,
    );
    if (budget < minimum * (1 - 1e-9)) throw new BudgetTooLowError(budget, minimum);
  }
  const hours = options.warmupHours ?? 0;
  if (!(Number.isFinite(hours) && hours >= 0)) {
    throw new BoaOptionsError(`boa warmupHours must be a number >= 0 (0: no warm-up), got ${hours}`);
  }
  const warmup = hours > 0 ? warmupOptions(hours) : BOA_DEFAULTS.warmup;
  const drainHours = options.drainAfterHours ?? DEFAULT_DRAIN.afterHours;
  if (!(Number.isFinite(drainHours) && drainHours >= 0)) {
    throw new BoaOptionsError(`boa drainAfterHours must be a number >= 0 (0: never), got ${drainHours}`);
  }
  const drain = drainHours > 0 ? { ...DEFAULT_DRAIN, afterHours: drainHours } : null;
  const band = checked('fillBelowBand', () => bandFillOptions(options.fillBelowBand ?? 0));
  const bandFill = band.band > 0 ? band : BOA_DEFAULTS.bandFill;
  const planCap = checked('planCapMultiple', () =>
    planCapOptions(options.planCapMultiple ?? DEFAULT_PLAN_CAP.multiple, DEFAULT_PLAN_CAP.relaxHours),
  );
  const credit = checked('creditSpendHours', () =>
    creditOptions(options.creditSpendHours ?? DEFAULT_CREDIT.spendHours, DEFAULT_CREDIT.loadShare),
  );
  const confidence = options.rateConfidence ?? DEFAULT_ONLINE_RATES.confidence;
  if (!(Number.isFinite(confidence) && confidence >= 0 && confidence <= MAX_RATE_CONFIDENCE)) {
    throw new BoaOptionsError(
      `boa rateConfidence must be a number from 0 (the estimate) to ${MAX_RATE_CONFIDENCE} standard errors, got ${confidence}`,
    );
  }
  const firstDayArrivals = options.firstDayArrivals ?? DEFAULT_ONLINE_RATES.firstDayArrivals;
  if (!(
    Number.isFinite(firstDayArrivals) &&
    firstDayArrivals >= 0 &&
    firstDayArrivals <= MAX_FIRST_DAY_ARRIVALS
  )) {
    throw new BoaOptionsError(
      `boa firstDayArrivals must be a number from 0 (none) to ${MAX_FIRST_DAY_ARRIVALS} arrivals a class, got ${firstDayArrivals}`,
    );
  }
  const demandHours = options.demandHalfLifeHours ?? 0;
  if (!(Number.isFinite(demandHours) && demandHours >= 0)) {
    throw new BoaOptionsError(
      `boa demandHalfLifeHours must be a number >= 0 (0: no demand ratio), got ${demandHours}`,
    );
  }
  const lookahead = options.ceilingLookaheadHours ?? DEFAULT_SPEND_CEILING.lookaheadHours;
  const { horizonHours } = DEFAULT_SPEND_CEILING;
  if (!(
    Number.isFinite(lookahead) &&
    lookahead >= horizonHours &&
    lookahead < BOA_DEFAULTS.budgetWindowHours
  )) {
    throw new BoaOptionsError(
      `boa ceilingLookaheadHours must be a number from the spend ceiling's horizon (${horizonHours} h) to below the budget window's ${BOA_DEFAULTS.budgetWindowHours} hours, got ${lookahead}`,
    );
  }
  const riseHours = options.rateRiseHours ?? DEFAULT_RISE.hours;
  if (!(Number.isFinite(riseHours) && riseHours >= 0 && riseHours < DEFAULT_ONLINE_RATES.windowHours)) {
    throw new BoaOptionsError(
      `boa rateRiseHours must be a number from 0 (no rise detection) to below the rate window's ${DEFAULT_ONLINE_RATES.windowHours} hours, got ${riseHours}`,
    );
  }
  const prior = options.priorRatesPerHour;
  if (prior !== undefined) {
    if (rates !== 'online')
      throw new BoaOptionsError(
        `boa priorRatesPerHour needs online rates (they are its prior), got "${rates}"`,
      );
    for (const [name, rate] of Object.entries(prior)) {
      if (!(Number.isFinite(rate) && rate >= 0))
        throw new BoaOptionsError(
          `boa priorRatesPerHour.${name} must be a number >= 0 (jobs/hour), got ${rate}`,
        );
    }
  }
  const clear = options.clearHalfLifeHours;
  if (clear !== undefined && !(Number.isFinite(clear) && clear > 0)) {
    throw new BoaOptionsError(`boa clearHalfLifeHours must be a number > 0 (hours), got ${clear}`);
  }
  const saved = options.fillSavedRestarts;
  if (saved !== undefined && !(Number.isFinite(saved) && saved > 0)) {
    throw new BoaOptionsError(`boa fillSavedRestarts must be a number > 0 (restarts), got ${saved}`);
  }
  const quietSaved = options.quietFillSavedRestarts ?? QUIET_FILL.minSavedRestarts;
  if (!(Number.isFinite(quietSaved) && (quietSaved as number) >= 0)) {
    throw new BoaOptionsError(
      `boa quietFillSavedRestarts must be a number >= 0 (restarts; 0: none), got ${quietSaved}`,
    );
  }
  const queueOrder = options.queueOrder ?? BOA_DEFAULTS.queueOrder;
  if (!(QUEUE_ORDERS as readonly string[]).includes(queueOrder)) {
    throw new BoaOptionsError(
      `boa queueOrder must be one of ${QUEUE_ORDERS.join(', ')}, got "${queueOrder}"`,
    );
  }
  const overdueHours = options.queueOverdueHours ?? BOA_DEFAULTS.queueOverdueHours;
  if (!(Number.isFinite(overdueHours) && overdueHours > 0)) {
    throw new BoaOptionsError(`boa queueOverdueHours must be a number of hours > 0, got ${overdueHours}`);
  }
  const history = options.history;
  if (history !== undefined) {
    if (rates !== 'online')
      throw new BoaOptionsError(`boa history needs online rates (it is what they read), got "${rates}"`);
    const bad = history.find((h) => !(Number.isFinite(h.secondsBefore) && h.secondsBefore > 0));
    if (bad)
      throw new BoaOptionsError(
        `boa history: every submission must be before the trace (secondsBefore > 0), got ${bad.secondsBefore} (${bad.app})`,
      );
  }
  return {
    ...BOA_DEFAULTS,
    onlineRates: {
      ...BOA_DEFAULTS.onlineRates,
      confidence,
      firstDayArrivals,
      rise: riseOptions(riseHours, DEFAULT_RISE.z) ?? null,
      ...(prior !== undefined ? { priorRatesPerHour: prior } : {}),
      ...(history !== undefined ? { history } : {}),
    },
    budget,
    solver,
    rates,
    warmup,
    drain,
    bandFill,
    planCap: planCap.multiple > 0 ? planCap : null,
    credit: credit.spendHours > 0 ? credit : null,
    control: { ...BOA_DEFAULTS.control, demandHalfLifeSeconds: demandHours * 3600 },
    ceiling: { ...DEFAULT_SPEND_CEILING, lookaheadHours: lookahead },
    clearHalfLifeHours: clear ?? null,
    fill: saved === undefined ? BOA_DEFAULTS.fill : { ...DEFAULT_FILL, minSavedRestarts: saved },
    quietFill:
      saved !== undefined || quietSaved === 0 ? null : { ...DEFAULT_FILL, minSavedRestarts: quietSaved },
    queueOrder: queueOrder as QueueOrder,
    queueOverdueHours: overdueHours,
  };
}

/** Options checked by their core module, the message naming the policy's setting. */
function checked<T>(setting: string, make: () => T): T {
  try {
    return make();
  } catch (error) {
    throw new BoaOptionsError(`boa ${setting}: ${(error as Error).message}`);
  }
}

export const boaPolicy: PolicyDefinition = {
  name: 'boa',
  mode: 'autoscaled',
  knob: 'budget',
  describe:
    'BOA: budget-optimal widths per class and statistical epoch from the calculators, fixed-width execution',
  create: (context, options) => new BoaPolicy(context, boaSettings(context, options)),
};
