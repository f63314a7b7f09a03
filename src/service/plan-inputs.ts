import type { MixedPlan } from '../core/plan.ts';
import type { ClassProfile } from '../core/profile.ts';
import type { PlanRow } from '../store/repository.ts';
import type { PlanInputs } from './calculator/compute.ts';
import {
  confidenceFactor,
  estimateRates,
  estimatesAt,
  evidenceHoursOf,
  type PastEstimate,
  firstDayRate,
  plannedRates,
  ratesMoved,
} from './estimators.ts';
import { riseOptions } from './rate-rise.ts';
import { demandRatioNow } from './demand.ts';
import type { ServiceJob } from './jobs.ts';
import type { BoaService } from './service.ts';
import { classInUse } from './class-in-use.ts';
import { classesLeftOut } from './classes-over-bound.ts';
import { warmupFactor, warmupOptions } from '../core/warmup.ts';
import { followedWidths, widthsFor } from '../core/shares.ts';
import { planBudgetCap } from '../core/plan-cap.ts';
import { creditFactor } from '../core/credit.ts';
import { planningBudget } from '../core/planning-budget.ts';
import { currentSpendCeiling, overheadRatioNow } from './budget.ts';
import { loadNeeds } from './load-needs.ts';

const HOUR = 3_600_000;

/** Inputs for the calculator from the current estimates, or undefined when there is no budget. */
export function planInputs(svc: BoaService): PlanInputs | undefined {
  const now = svc.deps.clock.now();
  return planInputsAt(svc, now)?.(loadNeeds(svc, now));
}

/**
 * The plan's inputs read at `now`, all but the load's needs, which the credit and the cap read: given
 * them (computed in a worker, load-needs.ts), the inputs as planInputs would have read them at `now`.
 * Read at once, not after that computation: meanwhile ticks move the ceiling, the rates and the jobs
 * (the demo at full speed planned later inputs then: average JCT 1156 -> 1180 s on workload-1).
 */
export function planInputsAt(svc: BoaService, now: number): ((loadNeeds: number) => PlanInputs) | undefined {
  const budget = svc.state.budget;
  if (!budget) return undefined;
  const ratio = overheadRatioNow(svc, now);
  const demand = demandRatioNow(svc, now);
  const ceiling = currentSpendCeiling(svc, now);
  const rules = planningRules(svc);
  const classes = estimatedClasses(svc);
  const ratesPerHour = loadRates(svc, now);
  const shape = clusterShape(svc);
  return (loadNeeds) => {
    const input = {
      budget: budget.gpuHoursPerHour,
      controlBudget: budget.gpuHoursPerHour / (ratio * demand),
      warmupFactor: planningFactor(svc, now),
      loadNeeds,
      // The credit counts only the room the ceiling can pay out; the cap's relaxing the window's whole
      // shortfall, as planCap (below) and the budget view say.
      unspentGpuHours: ceiling?.spendableGpuHours ?? 0,
      shortfallGpuHours: -(ceiling?.debtGpuHours ?? 0),
    };
    return {
      classes,
      ratesPerHour,
      budget: budget.gpuHoursPerHour,
      ...plannedBudgets(planningBudget(input, rules)),
      demandRatio: demand,
      solver: svc.deps.config.solver,
      ...shape,
    };
  };
}

/**
 * The cluster as the calculator sees it: GPUs per node, and the most GPUs one job can get (the node
 * group's maximum, or the operator's maxNodes if lower). A plan wider than the group would count on
 * speedups no job can reach, and spend the budget on them.
 */
export function clusterShape(svc: BoaService): { gpusPerNode: number; maxWidth?: number } {
  const { config } = svc.deps;
  const maxNodes = Math.min(
    svc.state.group?.maxSize ?? Number.POSITIVE_INFINITY,
    config.maxNodes ?? Number.POSITIVE_INFINITY,
  );
  const gpusPerNode = config.gpusPerNode;
  return Number.isFinite(maxNodes) ? { gpusPerNode, maxWidth: maxNodes * gpusPerNode } : { gpusPerNode };
}

/**
 * The plan's budget, the budget without the cap where the cap held it down (demand.ts reads it), and
 * the budget without the credit's raise to the load's minimum where it was raised (compute.ts reads it).
 */
function plannedBudgets(budgets: { planned: number; uncapped: number; unraised?: number }) {
  return {
    planningBudget: budgets.planned,
    ...(budgets.planned < budgets.uncapped ? { uncappedBudget: budgets.uncapped } : {}),
    ...(budgets.unraised === undefined ? {} : { unraisedBudget: budgets.unraised }),
  };
}

/** The service's credit and plan cap, from its config (core/credit.ts, core/plan-cap.ts). */
function planningRules(svc: BoaService) {
  const { config } = svc.deps;
  return {
    credit: { spendHours: config.creditSpendHours, loadShare: config.creditLoadShare },
    planCap: { multiple: config.planCapMultiple, relaxHours: config.planCapRelaxHours },
  };
}

/** The most budget the plan may be made with: a multiple of the load's minimum (core/plan-cap.ts). */
export function planCap(svc: BoaService, now: number, ceiling = currentSpendCeiling(svc, now)): number {
  const budget = svc.state.budget?.gpuHoursPerHour ?? 0;
  // The window's whole shortfall, not what the ceiling can pay out (the credit's): the relaxing says the
  // budget goes unused, and a cap only lowers the plan's budget. Read off spendableGpuHours, any budget
  // change (a raise of 40 to 41 too) dropped a generous budget's cap to twice the load's need for hours
  // (found in review).
  const unspentGpuHours = -(ceiling?.debtGpuHours ?? 0);
  return planBudgetCap(
    { budget, minFeasibleBudget: loadNeeds(svc, now), unspentGpuHours },
    planningRules(svc).planCap,
  );
}

/**
 * GPU-hours per hour plans get from the window's credit while the load is tight (core/credit.ts): the
 * credit's factor times the budget, or the load's minimum where that is higher (core/planning-budget.ts
 * raises to it before the credit).
 */
export function creditNow(svc: BoaService, now: number, ceiling = currentSpendCeiling(svc, now)): number {
  const budget = svc.state.budget?.gpuHoursPerHour ?? 0;
  const unspentGpuHours = ceiling?.spendableGpuHours ?? 0;
  const needs = loadNeeds(svc, now);
  const factor = creditFactor({ budget, loadNeeds: needs, unspentGpuHours }, planningRules(svc).credit);
  return factor > 1 ? Math.max(budget, needs) * (factor - 1) : 0;
}

/** The fraction of the budget planned with now: less than 1 during the opt-in warm-up. */
export function planningFactor(svc: BoaService, now: number): number {
  const warmup = warmupOptions(svc.deps.config.warmupHours);
  return warmupFactor((now - svc.state.startedAt) / HOUR, warmup);
}

/** The rates the plan is made for: the estimate, its falls followed slowly (estimators.ts plannedRates). */
export function estimatedRates(svc: BoaService, now: number): Record<string, number> {
  const { config, repo } = svc.deps;
  const classes = rateClasses(svc);
  // Each past estimate the hold reads looks a window further back.
  const windows = config.rateHoldHalfLifeHours > 0 ? 2 : 1;
  const since = now - windows * config.rateWindowHours * HOUR;
  const rise = riseOptions(config.rateRiseHours, config.rateRiseZ);
  return plannedRates(
    classes,
    repo.submissionsSince(since),
    {
      now,
      windowHours: config.rateWindowHours,
      priorWeightHours: config.priorWeightHours,
      observedSince: svc.state.ratesObservedSince,
      holdHalfLifeHours: config.rateHoldHalfLifeHours,
      confidence: config.rateConfidence,
      ...(rise ? { rise } : {}),
      firstDayArrivals: config.firstDayArrivals,
    },
    pastEstimates(
      svc,
      JSON.stringify([
        classes,
        svc.state.ratesObservedSince,
        svc.state.historyKey,
        config.rateConfidence,
        rise ?? null,
      ]),
    ),
  );
}

/** The current rate window's inputs: the classes, their submissions in it and the estimator's options. */
function currentWindow(svc: BoaService, now: number) {
  const { config, repo } = svc.deps;
  const since = Math.max(now - config.rateWindowHours * HOUR, svc.state.ratesObservedSince);
  const options = {
    now,
    windowHours: config.rateWindowHours,
    priorWeightHours: config.priorWeightHours,
    observedSince: svc.state.ratesObservedSince,
  };
  return { since, classes: rateClasses(svc), submissions: repo.submissionsSince(since), options };
}

/** Jobs per hour the opt-in first-day arrivals add to each class without a configured prior now (estimators.ts). */
export function firstDayRateNow(svc: BoaService, now: number): number {
  const { config } = svc.deps;
  return firstDayRate({
    now,
    observedSince: svc.state.ratesObservedSince,
    windowHours: config.rateWindowHours,
    priorWeightHours: config.priorWeightHours,
    firstDayArrivals: config.firstDayArrivals,
  });
}

/**
 * The rate window as the plan reads it now: the hours it has observed (the service's own and any
 * imported history), and the classes without a configured prior it plans at 0 jobs an hour because
 * none of their jobs are in it. On a first day those include the rare classes not seen yet, which
 * the plan leaves no budget for until one arrives (docs/comparison.md).
 */
export function rateWindowNow(
  svc: BoaService,
  now: number,
): { observedHours: number; windowHours: number; plannedAtZero: string[] } {
  const windowHours = svc.deps.config.rateWindowHours;
  const observedHours = Math.min(windowHours, Math.max(0, now - svc.state.ratesObservedSince) / HOUR);
  const rates = estimatedRates(svc, now);
  const plannedAtZero = rateClasses(svc)
    .filter((c) => !(c.priorRatePerHour > 0) && !((rates[c.name] ?? 0) > 0))
    .map((c) => c.name)
    .sort();
  return { observedHours, windowHours, plannedAtZero };
}

/** What the opt-in confidence bound multiplies the load's estimate by now (estimators.ts); 1: off. */
export function rateConfidenceNow(svc: BoaService, now: number): number {
  const { config } = svc.deps;
  if (!(config.rateConfidence > 0)) return 1;
  const { since, classes, submissions, options } = currentWindow(svc, now);
  const estimate = estimateRates(classes, submissions, options);
  const evidenceHours = evidenceHoursOf(config.priorWeightHours, Math.max(0, now - since) / HOUR);
  return confidenceFactor(estimate, evidenceHours, config.rateConfidence);
}

/**
 * What rise detection (rate-rise.ts) multiplies the load's estimate by now: the estimate's total over
 * the window's alone; 1: no rise (or detection off).
 */
export function rateRiseNow(svc: BoaService, now: number): number {
  const { config } = svc.deps;
  const rise = riseOptions(config.rateRiseHours, config.rateRiseZ);
  if (!rise) return 1;
  const { classes, submissions, options } = currentWindow(svc, now);
  const { window, risen } = estimatesAt(classes, submissions, { ...options, rise });
  const total = (rates: Record<string, number>) => Object.values(rates).reduce((a, b) => a + b, 0);
  return risen && total(window) > 0 ? total(risen) / total(window) : 1;
}

/** Each class with its configured prior, as the rate estimator takes them. */
function rateClasses(svc: BoaService): Array<{ name: string; priorRatePerHour: number }> {
  return [...svc.state.classes.values()].map((c) => ({
    name: c.profile.name,
    priorRatePerHour: c.priorRatePerHour,
  }));
}

/** Past estimates kept between calls: a cache, dropped when the classes or their priors change. */
const memos = new WeakMap<BoaService, { key: string; estimates: Map<number, PastEstimate> }>();

function pastEstimates(svc: BoaService, key: string): Map<number, PastEstimate> {
  let memo = memos.get(svc);
  if (memo?.key !== key) memos.set(svc, (memo = { key, estimates: new Map() }));
  return memo.estimates;
}

/**
 * The load to plan for: the estimated arrival rates plus the jobs waiting now, as if they arrived
 * evenly over one budget window. A burst then weighs as the backlog it is (and shrinks as it drains),
 * and under a backlog the plan moves to the cheaper widths that serve more jobs within the budget.
 */
export function loadRates(svc: BoaService, now: number): Record<string, number> {
  const rates = { ...estimatedRates(svc, now) };
  const windowHours = svc.deps.config.budgetWindowHours;
  for (const job of svc.state.jobs.values()) {
    if (job.state === 'waiting') rates[job.className] = (rates[job.className] ?? 0) + 1 / windowHours;
  }
  return rates;
}

/**
 * Class profiles as the plan reads them (class-in-use.ts): each epoch's speedups corrected by what its
 * jobs showed at two or more widths, and its work blended with the samples, each clamped to the
 * profile's bounds (trust.ts: one job moves an epoch's estimate at most so far).
 */
export function estimatedClasses(svc: BoaService): ClassProfile[] {
  const leftOut = classesLeftOut(svc)?.classes;
  const planned = [...svc.state.classes.values()].filter((c) => !leftOut?.includes(c.profile.name));
  return planned.map((cls) => classInUse(svc, cls).profile);
}

export function adoptPlan(svc: BoaService, row: PlanRow): void {
  svc.state.plan = { row, plan: row.plan as MixedPlan };
}

/**
 * Gives a job its widths from the current plan: the share its draw falls in (core/shares.ts). A started
 * job keeps its current epoch's width unless the plan moved it 2x (a change is a restart); its later
 * epochs follow the plan. Without this a job admitted in a burst, when the plan is at its cheapest
 * widths, kept 1 GPU for its whole life: on bursty-960-1 at 89 GPU-hours/hour three such jobs ran
 * for 140 hours on an otherwise empty cluster. Returns whether the widths changed (to be saved).
 */
export function followPlan(svc: BoaService, job: ServiceJob): boolean {
  const current = svc.state.plan;
  const planned = current ? widthsFor(current.plan, job.className, job.draw) : undefined;
  if (!current || !planned) return false;
  job.planId = current.row.id;
  // Most new plans leave most jobs' widths as they are: no copy then (every job follows every plan).
  if (sameWidths(job.widths, planned)) return false;
  const next =
    job.startedAt !== null && job.widths ? followedWidths(planned, job.widths, job.statEpoch) : [...planned];
  if (sameWidths(job.widths, next)) return false;
  job.widths = next;
  return true;
}

function sameWidths(a: readonly number[] | null, b: readonly number[]): boolean {
  if (a?.length !== b.length) return false;
  for (let i = 0; i < b.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The group maximum a re-plan was last asked for: a plan that keeps failing is asked for once per
 * change, not every tick (the calculator's timer still retries it).
 */
const askedForWidth = new WeakMap<BoaService, number | undefined>();

/** Re-plans when the node group's maximum changed since the plan was made (the widths it allows). */
export function replanIfGroupResized(svc: BoaService): void {
  const plan = svc.state.plan;
  if (!plan || !svc.state.budget) return;
  const planned = (plan.row.inputs as { maxWidth?: number }).maxWidth;
  const width = clusterShape(svc).maxWidth;
  if (planned === width) {
    askedForWidth.delete(svc);
    return;
  }
  if (askedForWidth.has(svc) && askedForWidth.get(svc) === width) return;
  askedForWidth.set(svc, width);
  void svc.planner.request('node group');
}

/** Re-plans when a class's load (loadRates) moved by more than a quarter since the plan was made. */
export function replanIfRatesMoved(svc: BoaService): void {
  const planned = (svc.state.plan?.row.inputs as { ratesPerHour?: Record<string, number> } | undefined)
    ?.ratesPerHour;
  if (!planned || !svc.state.budget) return;
  if (ratesMoved(planned, loadRates(svc, svc.deps.clock.now()))) void svc.planner.request('rates');
}
