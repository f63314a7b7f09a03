import { budgetBelowFloor, budgetFloor } from './budget-floor.ts';
import { ServiceError } from './errors.ts';
import { type Averages, averagesFromTotals, overheadRatio } from './ledger.ts';
import { loadNeeds } from './load-needs.ts';
import { clusterShape, estimatedClasses } from './plan-inputs.ts';
import type { BoaService } from './service.ts';
import type { QueueOrder } from '../core/ceiling-widths.ts';
import type { ServiceConfig } from './config.ts';
import {
  ceilingLookbacks,
  changeLookbacks,
  defaultLookaheadHours,
  type SpendCeiling,
  spendCeiling,
} from '../core/spend-ceiling.ts';
import type { BudgetSetting } from './state.ts';

const HOUR = 3_600_000;

/** How a warning names the queue's order (config queueOrder). */
const QUEUE_SAYS: Record<QueueOrder, string> = {
  'least-work-left': 'least work left first',
  submitted: 'oldest first',
};

/**
 * What a budget must be, for a refusal of one that is not a number or not above 0: "must be > 0" alone
 * read as if 0.5 were accepted, refused next as below the smallest accepted budget (a newcomer trial).
 */
export function budgetAllowed(svc: BoaService): { readonly leastPaid: number; readonly says: string } {
  const { leastPaid, why } = budgetFloor(estimatedClasses(svc), svc.deps.config.gpusPerNode);
  return {
    leastPaid,
    says: `a number of GPU-hours per hour of at least ${leastPaid}, the smallest accepted budget (${why})`,
  };
}

/**
 * Sets the budget. Refused (422) only below what one job of the cheapest class needs to run at all
 * (its narrowest width, in GPUs, rounded up to whole nodes); a budget below the minimum for the current estimates is accepted
 * with a warning: the plan uses the cheapest widths and the jobs the budget cannot serve queue.
 */
export function setBudget(
  svc: BoaService,
  gpuHoursPerHour: number,
): { budget: BudgetSetting; minFeasibleBudget: number; warning: string | null } {
  if (!Number.isFinite(gpuHoursPerHour) || gpuHoursPerHour <= 0) {
    const allowed = budgetAllowed(svc);
    throw new ServiceError(400, 'invalid', `gpuHoursPerHour must be ${allowed.says}`, 'gpuHoursPerHour', {
      minFeasibleBudget: allowed.leastPaid,
    });
  }
  const classes = estimatedClasses(svc);
  const below = budgetBelowFloor(gpuHoursPerHour, classes, svc.deps.config.gpusPerNode);
  if (below) {
    throw new ServiceError(422, 'budget_below_minimum', below.message, 'gpuHoursPerHour', {
      minFeasibleBudget: below.leastPaid,
    });
  }
  const now = svc.deps.clock.now();
  // The load's needs as they stand (load-needs.ts): the plan made for this budget computes the current
  // minimum, and the answer takes that one once it is made.
  const minFeasibleBudget = loadNeeds(svc, now);
  const warning = budgetWarning(svc, gpuHoursPerHour, minFeasibleBudget, overheadRatioNow(svc, now));
  const maxGpus = clusterShape(svc).maxWidth;
  // A changed budget holds every window to what was promised over it: the old value for the hours it
  // was in force, the new one from now. Starting the window again would forgive the debt paid under the
  // old value (a cut after a burst let the next hours pay 26% over both budgets; 40 -> 40.01 cleared it).
  const previous = svc.state.budget;
  const unchanged = previous?.gpuHoursPerHour === gpuHoursPerHour;
  const known = maxGpus === undefined ? {} : { maxGpus };
  const budget: BudgetSetting =
    previous && unchanged
      ? previous
      : previous
        ? {
            gpuHoursPerHour,
            setAt: now,
            ...known,
            promisedSince: previous.promisedSince ?? previous.setAt,
            earlier: inForceWithin(
              [
                ...(previous.earlier ?? []),
                {
                  gpuHoursPerHour: previous.gpuHoursPerHour,
                  setAt: previous.setAt,
                  ...(previous.maxGpus === undefined ? {} : { maxGpus: previous.maxGpus }),
                },
              ],
              now,
              now - svc.deps.config.budgetWindowHours * HOUR,
            ),
          }
        : { gpuHoursPerHour, setAt: now, ...known };
  if (!unchanged) svc.deps.repo.putSetting('budget', budget, now);
  svc.state.budget = budget;
  // The warning is logged by whoever answers it, worded from the plan made for this budget (budget_warning):
  // this one, from the load needs kept before that plan, could name another minimum than the answer.
  svc.deps.logger.info({ event: 'budget_set', gpuHoursPerHour, unchanged }, 'budget set');
  // The same budget again leaves a plan being computed valid (a config loop re-applying it must not
  // discard every plan: found in review).
  void svc.planner.request(unchanged ? 'budget unchanged' : 'budget');
  return { budget, minFeasibleBudget, warning };
}

/**
 * What a budget set is warned of: below the load's minimum (`minFeasibleBudget`, GPUs given to jobs; the
 * budget also pays the window's `overhead` on them), or above the GPUs the node group can ever run. The
 * answer to a budget set words it again from the new plan's minimum, so it says the figure its table does.
 */
export function budgetWarning(
  svc: BoaService,
  gpuHoursPerHour: number,
  minFeasibleBudget: number,
  overhead: number,
): string | null {
  const paidMinimum = minFeasibleBudget * overhead;
  const maxGpus = clusterShape(svc).maxWidth;
  if (gpuHoursPerHour < paidMinimum * (1 - 1e-9))
    return (
      `budget ${gpuHoursPerHour} is below ${paidMinimum.toFixed(3)} GPU-hours/hour, the minimum ` +
      `for the estimated arrivals` +
      (overhead > 1
        ? ` (${minFeasibleBudget.toFixed(3)} allocated to jobs, at the window's ${overhead.toFixed(2)} paid per allocated)`
        : '') +
      `: jobs will queue (${QUEUE_SAYS[svc.deps.config.queueOrder]}) until the budget allows them`
    );
  // Said by the API too, not only by the CLI on a terminal (found in a newcomer trial: a script's PUT of
  // 1000 against 256 GPUs got no word of it).
  if (maxGpus !== undefined && gpuHoursPerHour > maxGpus)
    return (
      `budget ${gpuHoursPerHour} is above the ${maxGpus} GPUs the node group can ever run ` +
      '(its maximum nodes x GPUs per node): at most those are paid, the rest can never be spent'
    );
  return null;
}

/** Where the budget window may start: where the ledger is whole from (state.ledgerSince), or the budget was set (a new promise). */
export function budgetWindowFloor(svc: BoaService, budget: BudgetSetting): number {
  return Math.max(svc.state.ledgerSince, budget.setAt);
}

/** Where the spend ceiling's window starts: where the ledger is whole from, or when a budget was first set. */
function promiseFloor(svc: BoaService, budget: BudgetSetting): number {
  return Math.max(svc.state.ledgerSince, budget.promisedSince ?? budget.setAt);
}

/** Earlier values still in force after `since` (the one in force then included), at most the last 1000. */
function inForceWithin(
  earlier: ReadonlyArray<{ gpuHoursPerHour: number; setAt: number }>,
  now: number,
  since: number,
) {
  const kept = earlier.filter((entry, i) => (earlier[i + 1]?.setAt ?? now) > since);
  return kept.slice(-1000);
}

/**
 * The budgets in force, oldest first, each counted at most the GPUs the node group could run when it
 * was set: a budget above that can never be spent, and counted whole, 100000 set for 5 s by mistake and
 * then 4 read as a window budget of 1279 for an hour and hid a day of paying twice 4 from the overspend
 * alarm (found in a newcomer trial). The group's size when set, not now: a group made smaller later
 * would make debt of what earlier budgets allowed.
 */
export function promisedValues(budget: BudgetSetting): Array<{ gpuHoursPerHour: number; setAt: number }> {
  return [...(budget.earlier ?? []), budget].map((value) => ({
    gpuHoursPerHour: heldToGpuHoursPerHour(value),
    setAt: value.setAt,
  }));
}

/** A budget value as it is held to: at most the GPUs the node group could run when it was set. */
export function heldToGpuHoursPerHour(value: { gpuHoursPerHour: number; maxGpus?: number }): number {
  return Math.min(value.gpuHoursPerHour, value.maxGpus ?? Number.POSITIVE_INFINITY);
}

/**
 * GPU-hours promised over the last `hours` before `now`: each value (promisedValues) for the time it
 * was in force (the oldest kept reaching back as far as asked), the current one since it was set.
 */
export function promisedGpuHours(budget: BudgetSetting, now: number, hours: number): number {
  const values = promisedValues(budget);
  const from = now - hours * HOUR;
  let promised = 0;
  values.forEach((value, i) => {
    const start = i === 0 ? from : Math.max(from, value.setAt);
    const end = Math.min(now, values[i + 1]?.setAt ?? now);
    if (end > start) promised += (value.gpuHoursPerHour * (end - start)) / HOUR;
  });
  return promised;
}

/**
 * promisedGpuHours(budget, now, hours) for many `hours`: the spend ceiling asks once per window it
 * checks, one per budget change in the window among them, so with the 1000 changes a window keeps each
 * tick summed a million terms (a GET or PUT of the budget took 60-150 ms: bench:soak, which changes it
 * every 20th request, fell from 1,700 to 190 requests a second). Sums of the later values kept, a query is
 * a binary search; the same sum, by values in the order they were set (a clock stepped back: summed
 * whole, as before).
 */
export function promisedInLast(budget: BudgetSetting, now: number): (hours: number) => number {
  const values = promisedValues(budget);
  const starts = values.map((v, i) => (i === 0 ? Number.NEGATIVE_INFINITY : v.setAt));
  if (starts.some((start, i) => i > 0 && start < (starts[i - 1] as number)))
    return (hours) => promisedGpuHours(budget, now, hours);
  const ends = values.map((_, i) => Math.min(now, values[i + 1]?.setAt ?? now));
  const part = (i: number, from: number) =>
    (values[i]!.gpuHoursPerHour * Math.max(0, ends[i]! - Math.max(from, starts[i]!))) / HOUR;
  // later[i]: what values i and after promised whole (all but the oldest start at their setAt).
  const later = new Array<number>(values.length + 1).fill(0);
  for (let i = values.length - 1; i >= 1; i--) later[i] = later[i + 1]! + part(i, starts[i]!);
  return (hours) => {
    const from = now - hours * HOUR;
    // The first value set at or after `from`: it and the later ones count whole, the one before in part.
    let lo = 1;
    let hi = values.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid]! >= from) hi = mid;
      else lo = mid + 1;
    }
    return later[lo]! + part(lo - 1, from);
  };
}

/** The spend ceiling's look-ahead: the configured one, or three horizons (core/spend-ceiling.ts). */
export function ceilingLookaheadHours(config: ServiceConfig): number {
  return (
    config.budgetLookaheadHours ?? defaultLookaheadHours(config.budgetHorizonHours, config.budgetWindowHours)
  );
}

/** The most GPUs and nodes the budget window allows from now on (core/spend-ceiling.ts). */
export function currentSpendCeiling(svc: BoaService, now: number): SpendCeiling | undefined {
  const budget = svc.state.budget;
  if (!budget) return undefined;
  const { config, repo } = svc.deps;
  const windowHours = config.budgetWindowHours;
  const elapsedHours = Math.max(0, now - promiseFloor(svc, budget)) / HOUR;
  const lookaheadHours = ceilingLookaheadHours(config);
  const lookbacks = ceilingLookbacks(windowHours, config.budgetHorizonHours, elapsedHours, lookaheadHours);
  // The whole window too: the store's in-memory sum forgets what is older than the earliest start it
  // is asked for, and the ledger's window averages (plan inputs, views, metrics) read the whole window,
  // since the first start, not since the budget was set.
  const whole = Math.min(windowHours, Math.max(0, now - svc.state.ledgerSince) / HOUR);
  // The windows that start where the budget changed (within the window, after the floor). A change
  // made this very instant counts (the tick right after a PUT), as does one the clock has since stepped
  // back before: taken as made now, not dropped until the clock catches up.
  const changedHoursAgo = [...(budget.earlier ?? []).slice(1), budget]
    .map((value) => Math.max(0, now - value.setAt) / HOUR)
    .filter((hours) => hours < Math.min(windowHours, elapsedHours));
  const asked = [
    ...lookbacks,
    ...changeLookbacks(changedHoursAgo, windowHours, config.budgetHorizonHours, lookaheadHours, elapsedHours),
  ];
  const [, ...paid] = repo.ledger.paidGpuMsFrom(
    [whole, ...asked].map((hours) => now - hours * HOUR),
    now,
  );
  // While listings fail, the nodes the group may have launched beyond the last listing count as paid.
  const paidByLookback = new Map(
    asked.map((hours, i) => [
      hours,
      ((paid[i] as number) + svc.state.unlisted.gpuMs(now - hours * HOUR, now)) / HOUR,
    ]),
  );
  return spendCeiling({
    budgetGpuHoursPerHour: budget.gpuHoursPerHour,
    windowHours,
    elapsedHours,
    paidInLast: (hours) => paidByLookback.get(hours) as number,
    allowedInLast: promisedInLast(budget, now),
    changedHoursAgo,
    horizonHours: config.budgetHorizonHours,
    lookaheadHours,
    gpusPerNode: config.gpusPerNode,
    slack: config.budgetSlack,
    heldNodes: svc.state.nodes.length,
  });
}

/**
 * The window's paid GPU-hours per allocated one (whole nodes, boot, release), between 1 and 2: what the
 * plan divides the budget by, so what a budget must cover beyond the GPUs the jobs are given.
 */
export function overheadRatioNow(svc: BoaService, now: number): number {
  const window = svc.deps.config.budgetWindowHours * HOUR;
  return overheadRatio(svc.ledgerAverages(Math.max(now - window, svc.state.ledgerSince), now));
}

/**
 * loadNeeds as a budget: the load's allocated GPU-hours at the window's overhead. A budget is paid, so
 * one between the two (41 against 40 allocated at 1.1 paid each) still leaves jobs queued.
 */
export function paidLoadNeeds(svc: BoaService, now: number): number {
  return loadNeeds(svc, now) * overheadRatioNow(svc, now);
}

/** Paid and allocated time-averages over [from, to], the open allocation interval included. */
export function ledgerAverages(svc: BoaService, from: number, to: number): Averages {
  return withOpenInterval(svc, svc.deps.repo.ledger.ledgerTotals(from, to), from, to);
}

/** ledgerAverages over many spans, none starting before `floor`, the ledger read once (ledger-store.ts totalsFrom). */
export function ledgerAveragesFrom(svc: BoaService, floor: number): (from: number, to: number) => Averages {
  const totals = svc.deps.repo.ledger.totalsFrom(floor);
  return (from, to) => withOpenInterval(svc, totals(from, to), from, to);
}

function withOpenInterval(
  svc: BoaService,
  totals: { paidGpuMs: number; allocatedGpuMs: number },
  from: number,
  to: number,
): Averages {
  const open = svc.state.allocatedGpus * Math.max(0, to - Math.max(from, svc.state.allocatedFrom));
  return averagesFromTotals(totals.paidGpuMs, totals.allocatedGpuMs + open, to - from);
}
