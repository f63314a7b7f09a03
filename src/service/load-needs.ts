import { checkBudget, type PlanInputs, type PlanProblem } from './calculator/compute.ts';
import type { PlanComputer } from './calculator/computer.ts';
import { clusterShape, estimatedClasses, loadRates, planInputsAt } from './plan-inputs.ts';
import type { BoaService } from './service.ts';

/** How long a computed load needs stands while the load's key is unchanged. */
const KEPT_MS = 60_000;
/** After a failed computation in the worker, the value kept is shown this long before the next try. */
const RETRY_MS = 60_000;

/** What the cheapest plan for the current load is computed from (as the plan's own inputs). */
export function loadProblem(svc: BoaService, now: number): PlanProblem {
  return { classes: estimatedClasses(svc), ratesPerHour: loadRates(svc, now), ...clusterShape(svc) };
}

/**
 * The budget the current load would need: the cheapest plan for the load (loadRates: the estimated
 * arrivals plus the jobs waiting now, cleared within one budget window). Recomputed once a minute, and
 * when a submission, a class or the waiting queue changes it (a burst shows in `boa status` now, not a
 * minute later). Where the service computes in a worker, a value no longer current is answered as it
 * stands (loadNeedsAsOf says when it was computed) while the worker computes the current one: for the
 * largest profiles that takes a second or more, which every tick and submission waited for on the
 * service's thread (found in review).
 */
export function loadNeeds(svc: BoaService, now: number): number {
  const key = loadKey(svc);
  const kept = svc.state.loadNeeds;
  if (kept && isCurrent(kept, key, now)) return kept.gpuHoursPerHour;
  const computer = queriesOf(svc);
  // Nothing computed since the start: the plan in force's minimum is the same figure, as of its plan.
  const standing = kept ?? planned(svc);
  // Before any plan (a first start), or where plans are computed inline: computed here.
  if (!computer?.minimum || !standing)
    return keep(svc, now, key, checkBudget(loadProblem(svc, now), 0, false));
  svc.state.loadNeeds = standing;
  refresh(svc, computer, now, key);
  return standing.gpuHoursPerHour;
}

/** The plan in force's minimum as the load needs then (the same figure: its inputs' cheapest plan). */
function planned(svc: BoaService) {
  const plan = svc.state.plan?.row;
  return plan && { at: plan.computedAt, key: '', gpuHoursPerHour: plan.minFeasibleBudget };
}

/** When the figure loadNeeds answers was computed (it may be older than now: see loadNeeds). */
export function loadNeedsAsOf(svc: BoaService, now: number): number {
  loadNeeds(svc, now);
  return svc.state.loadNeeds?.at ?? now;
}

/**
 * A plan's inputs, read when it is asked for (planInputsAt); the load needs its credit and cap read are
 * computed in the plan's own worker when the kept figure is not current, and only they are awaited.
 */
export function planInputsWhenAsked(svc: BoaService): PlanInputs | undefined | Promise<PlanInputs> {
  const now = svc.deps.clock.now();
  const inputsWith = planInputsAt(svc, now);
  if (!inputsWith) return undefined;
  const key = loadKey(svc);
  const kept = svc.state.loadNeeds;
  const computer = svc.deps.computer;
  if ((kept && isCurrent(kept, key, now)) || !computer.minimum) return inputsWith(loadNeeds(svc, now));
  return computer.minimum(loadProblem(svc, now)).then((value) => {
    keepIfNewer(svc, now, key, value);
    return inputsWith(value);
  });
}

/** Where the views' load needs and the frontier are computed: the queries' worker, or the plans'. */
export function queriesOf(svc: BoaService): PlanComputer | undefined {
  return svc.deps.queries ?? svc.deps.computer;
}

function isCurrent(kept: { at: number; key: string }, key: string, now: number): boolean {
  return kept.key === key && now - kept.at < KEPT_MS;
}

function keep(svc: BoaService, at: number, key: string, gpuHoursPerHour: number): number {
  svc.state.loadNeeds = { at, key, gpuHoursPerHour };
  return gpuHoursPerHour;
}

/** A computation that lands after a later one must not put an older load back. */
function keepIfNewer(svc: BoaService, at: number, key: string, gpuHoursPerHour: number): void {
  const kept = svc.state.loadNeeds;
  if (!kept || kept.at <= at) keep(svc, at, key, gpuHoursPerHour);
}

/** One computation at a time: a burst of submissions asks again only once the one running answers. */
function refresh(svc: BoaService, computer: PlanComputer, now: number, key: string): void {
  const s = svc.state;
  if (s.loadNeedsComputing || (s.loadNeedsRetryAt !== undefined && now < s.loadNeedsRetryAt)) return;
  const computing = computer.minimum!(loadProblem(svc, now)).then(
    (value) => {
      s.loadNeedsRetryAt = undefined;
      keepIfNewer(svc, now, key, value);
    },
    (error: Error) => {
      // The stop closes the workers: what they had fails, and is nothing to warn about.
      if (svc.planner.stopping) return;
      s.loadNeedsRetryAt = svc.deps.clock.now() + RETRY_MS;
      svc.deps.logger.warn(
        { event: 'load_needs_failed', error: error.message },
        "the load's needs could not be computed; the last figure stands (status: loadNeedsAsOf)",
      );
    },
  );
  s.loadNeedsComputing = computing.finally(() => {
    s.loadNeedsComputing = undefined;
  });
}

/**
 * What moves the load at once: the latest submission, the classes, the jobs waiting, an imported history,
 * the node group's maximum.
 */
export function loadKey(svc: BoaService): string {
  let waiting = 0;
  for (const job of svc.state.jobs.values()) if (job.state === 'waiting') waiting += 1;
  const { maxWidth } = clusterShape(svc);
  const s = svc.state;
  return `${s.lastSubmittedAt ?? 0}|${s.classesChanged}|${waiting}|${s.historyKey}|${maxWidth}`;
}
