/**
 * The boa policy in the simulator, as the service runs it: look up each job's width in the plan at its
 * statistical epoch, hold the widths under the service's spend ceiling (core/spend-ceiling.ts, core/ceiling-widths.ts: narrowed
 * by price, then queued), place with the fixed-width executor, and plan with a budget that
 * holds the paid time-average at the budget (budget-control.ts).
 */
import type { Widths } from '../../../core/plan.ts';
import type { ClusterView, Decision, JobView, Policy, PolicyContext } from '../../policy.ts';
import { StratifiedDraws } from './draws.ts';
import { EpochClock } from './lookahead.ts';
import { OnlineRates } from './online-rates.ts';
import { BudgetControl } from './budget-control.ts';
import { BoaPlanner, type PlannedWidths } from './planner.ts';
import { relocks, widthsFor } from '../../../core/shares.ts';
import { ratesMoved } from '../../../service/estimators.ts';
import { placeWanted } from './place.ts';
import { widthsToSize } from './placed-short.ts';
import { type ClassProfile, epochSpeedups } from '../../../core/profile.ts';
import { DEFAULT_LONG_WAIT_SECONDS } from '../../../core/ceiling-widths.ts';
import { ClearingFloor, type PriceLogEntry } from './clear-floor.ts';
import { DEFAULT_SPEND_CEILING } from '../../../core/spend-ceiling.ts';
import { ceilingNow, servedUnderCeiling, unspentInLookback } from './ceiling.ts';
import { workDoneInEpochFromFraction, weightedWorkLeft } from '../../../core/work-left.ts';
import { warmupFactor } from '../../../core/warmup.ts';
import { windowBelowBand } from '../../../core/exec/band-fill.ts';
import { drainedWidths } from './drain.ts';
import { planningBudget } from '../../../core/planning-budget.ts';
import { expectedGpuSeconds } from '../../../core/demand-ratio.ts';
import type { BoaSettings } from './settings.ts';

export class BoaPolicy implements Policy {
  readonly name = 'boa';
  readonly #planner: BoaPlanner;
  readonly #control: BudgetControl;
  readonly #online: OnlineRates | undefined;
  readonly #draws = new Map<number, number>();
  /** Each job's width in its current statistical epoch, fixed when it entered the epoch. */
  readonly #locks = new Map<number, { epoch: number; width: number }>();
  readonly #epochClock: EpochClock;
  readonly #drawer: StratifiedDraws;
  /** GPUs each job was given at the last tick, to book allocated time (completions mid-interval too). */
  #held = new Map<number, number>();
  /** Jobs holding GPUs beyond their plan's width (idle-fill.ts): the width they were given. */
  #bonus = new Map<number, number>();
  readonly #classes: ReadonlyMap<string, ClassProfile>;
  #completedGpuSeconds = 0;
  #lastTick: number | undefined;
  #planned: PlannedWidths | undefined;
  #plannedAt = Number.NEGATIVE_INFINITY;
  #plannedRates: Readonly<Record<string, number>> = {};
  /** Jobs waiting per class (at the last tick, plus arrivals since): the backlog the plan serves. */
  #waiting = new Map<string, number>();
  #replanDue = false;
  /** The first arrival: where the warm-up starts (the service's: its first start). */
  #firstArrival: number | undefined;
  #lastArrival: number | undefined;
  /** GPUs the drain adds to the plan's widths: expected, so the demand ratio does not narrow for them. */
  #drainExtra = 0;
  /** The control's budget when the plan in force was made, before the cap (core/plan-cap.ts). */
  #uncapped = 0;
  /** Plans made, for tests and reports. */
  replans = 0;
  /** The variant boa@clearH (clear-floor.ts); undefined: off. */
  readonly #clear: ClearingFloor | undefined;

  constructor(
    readonly context: PolicyContext,
    readonly settings: BoaSettings,
  ) {
    this.#epochClock = new EpochClock(context.profiles.classes);
    this.#classes = new Map(context.profiles.classes.map((c) => [c.name, c]));
    this.#planner = new BoaPlanner(context.profiles, settings.solver, context.seed);
    this.#control = new BudgetControl(settings.budget, settings.control);
    if (settings.clearHalfLifeHours !== null)
      this.#clear = new ClearingFloor(settings.clearHalfLifeHours, this.#planner);
    this.#online =
      settings.rates === 'oracle' || settings.price !== null
        ? undefined
        : new OnlineRates(
            context.profiles.classes.map((c) => c.name),
            settings.rates === 'prior'
              ? { ...settings.onlineRates, priorRatesPerHour: context.traceRatesPerHour }
              : settings.onlineRates,
          );
    this.#drawer = new StratifiedDraws(context.seed);
    if (!this.#online) this.#replan(0);
  }

  /** The current plan (undefined before the first one, with online rates). */
  /** With boa@clearH, each plan's prices (clear-floor.ts); empty otherwise. */
  get priceLog(): readonly PriceLogEntry[] {
    return this.#clear?.priceLog ?? [];
  }

  get planned(): PlannedWidths | undefined {
    return this.#planned;
  }

  get paidRatio(): number {
    return this.#control.ratio();
  }

  /** Allocated over what the plans in force expected (budget-control.ts), for tests and reports. */
  get demandRatio(): number {
    return this.#control.demand();
  }

  onArrival(job: JobView, now: number): void {
    this.#firstArrival ??= now;
    this.#lastArrival = now;
    this.#draws.set(job.id, this.#drawer.draw(job.app));
    this.#online?.record(job.app, now);
    this.#waiting.set(job.app, (this.#waiting.get(job.app) ?? 0) + 1);
    // The service re-plans on a submission that moved a class's load by more than a quarter.
    if (this.#planned?.plan[job.app] === undefined || this.#loadMoved(now)) {
      this.#replanDue = true;
    }
  }

  onCompletion(job: JobView, now: number): void {
    const gpus = this.#held.get(job.id) ?? 0;
    this.#completedGpuSeconds += gpus * (now - (this.#lastTick ?? now));
    this.#held.delete(job.id);
    this.#draws.delete(job.id);
    this.#locks.delete(job.id);
    this.#bonus.delete(job.id);
  }

  decide(cluster: ClusterView, jobs: readonly JobView[]): Decision {
    const now = cluster.now;
    this.#book(cluster);
    this.#waiting = new Map();
    for (const job of jobs) {
      if (job.allocation.length === 0) this.#waiting.set(job.app, (this.#waiting.get(job.app) ?? 0) + 1);
    }
    this.#maybeReplan(now);
    const plan = (this.#planned as PlannedWidths).plan;
    const widest = cluster.maxNodes * cluster.gpusPerNode;
    const ordered = [...jobs].sort((a, b) => a.arrival - b.arrival || a.id - b.id);
    const planned = ordered.map((job) => {
      const widths = widthsFor(plan, job.app, this.#drawOf(job));
      const width = Math.min(widest, this.#lockedWidth(job, widthAt(widths, job.statEpoch)));
      // Boot nodes ahead of a grow the plan makes at the next epoch boundary, so the job finds them ready.
      const soon = this.#epochClock.secondsToNextEpoch(job, now) <= this.settings.provisionLeadSeconds;
      const provision = soon ? Math.min(widest, widthAt(widths, job.statEpoch + 1)) : width;
      const state = job.allocation.length > 0 ? 'running' : 'waiting';
      const profile = this.#classes.get(job.app);
      const speedups = epochSpeedups(profile, job.statEpoch);
      const weight = profile?.weight ?? 1;
      return {
        id: job.id,
        state,
        width,
        current: job.allocation,
        provision,
        speedups,
        weight,
        // Read by the queue only on ticks the ceiling is checked (workLeftOf below).
        job,
        arrival: job.arrival,
      };
    });
    const { ceiling: ceilingOptions, budget, budgetWindowHours } = this.settings;
    const ceiling =
      ceilingOptions === null
        ? undefined
        : ceilingNow(ceilingOptions, budget, budgetWindowHours, this.#control, cluster);
    if (ceiling !== undefined && this.#clear !== undefined) {
      const jobs = {
        planned: planned.map((w) => w.width),
        current: planned.map((w) => this.#held.get(w.id) ?? 0),
        speedups: planned.map((w) => w.speedups),
        weights: planned.map((w) => w.weight),
      };
      this.#clear.observe(now, jobs, ceiling.gpus);
    }
    const maxNodes = Math.min(cluster.maxNodes, ceiling?.nodes ?? Number.POSITIVE_INFINITY);
    // Narrowed to what can run on the nodes the ceiling allows, as the service narrows (service/tick-widths.ts).
    const servedGpus = maxNodes * cluster.gpusPerNode;
    // The widths the ceiling serves (a running job keeps one within 2x of its target, by `held`), drained.
    const widthsFrom = (jobs: readonly (typeof planned)[number][], held: ReadonlyMap<number, number>) => {
      const served = ceiling
        ? servedUnderCeiling(
            jobs,
            held,
            servedGpus,
            (w) => w.speedups,
            (w) => now - w.arrival >= DEFAULT_LONG_WAIT_SECONDS,
            (w) => w.weight,
            this.settings.queueOrder === 'least-work-left'
              ? {
                  workLeftOf: (w) => this.#weightedWorkLeft(w.job),
                  overdue: (w) => now - w.arrival >= this.settings.queueOverdueHours * 3600,
                }
              : undefined,
          )
        : jobs;
      return drainedWidths({
        options: this.settings.drain,
        quietSeconds: this.#lastArrival === undefined ? 0 : now - this.#lastArrival,
        belowBand:
          ceiling !== undefined &&
          this.settings.bandFill !== null &&
          windowBelowBand(ceiling, this.settings.bandFill),
        budget: this.settings.budget,
        ceilingGpus: ceiling?.gpus,
        cluster,
        served,
        planned: jobs,
        jobs: ordered,
        classes: this.#classes,
        held,
      });
    };
    const drained = widthsFrom(planned, this.#held);
    const wanted = drained.wanted;
    this.#drainExtra = drained.extraGpus;
    const placed = placeWanted({
      wanted,
      ordered,
      cluster,
      maxNodes,
      fill: this.#quiet(now) ? (this.settings.quietFill ?? this.settings.fill) : this.settings.fill,
      classes: this.#classes,
      bonus: this.#bonus,
    });
    this.#held = placed.held;
    this.#bonus = placed.bonus;
    this.#lastTick = now;
    const sized = widthsToSize(planned, wanted, placed, (jobs, held) => widthsFrom(jobs, held).wanted);
    // Nodes for the plan's widths only: the extra GPUs are on nodes the plan keeps anyway.
    const needed = sized.reduce((sum, w) => sum + Math.max(w.width, w.provision), 0);
    const desiredNodes = Math.min(maxNodes, Math.ceil(needed / cluster.gpusPerNode));
    return { allocations: placed.allocations, desiredNodes };
  }

  /** No job has arrived for the drain's hours (the service's test, drain.ts there); never without a drain. */
  #quiet(now: number): boolean {
    const drain = this.settings.drain;
    return (
      drain !== null &&
      drain.afterHours > 0 &&
      this.#lastArrival !== undefined &&
      now - this.#lastArrival >= drain.afterHours * 3600
    );
  }

  /** Books the interval since the last tick into the paid / allocated estimate. */
  #book(cluster: ClusterView): void {
    const dt = this.#lastTick === undefined ? 0 : cluster.now - this.#lastTick;
    let allocated = this.#completedGpuSeconds;
    for (const gpus of this.#held.values()) allocated += gpus * dt;
    this.#completedGpuSeconds = 0;
    const planned = this.#planned;
    // Anti-windup at the plan's minimum and under the cap (core/demand-ratio.ts).
    const atMinimum =
      planned !== undefined && planned.plannedBudget <= planned.minFeasibleBudget * (1 + 1e-9);
    const capped = planned !== undefined && planned.plannedBudget < this.#uncapped * (1 - 1e-9);
    const expected = expectedGpuSeconds({
      planned: ((planned?.gpuHoursPerHour ?? 0) + this.#drainExtra) * dt,
      allocated,
      atMinimum,
      ...(capped ? { uncapped: this.#uncapped * dt } : {}),
    });
    this.#control.observe(
      cluster.now,
      new Map(cluster.nodes.map((n) => [n.id, n.gpus])),
      allocated,
      expected,
    );
  }

  #maybeReplan(now: number): void {
    const online = this.#online !== undefined;
    const due =
      this.#planned === undefined ||
      this.#replanDue ||
      (online && now - this.#plannedAt >= this.settings.replanSeconds);
    if (due) {
      this.#replan(now);
      return;
    }
    // A fixed price's plan never changes.
    if (this.settings.price !== null) return;
    const planned = this.#planned as PlannedWidths;
    if (now - this.#plannedAt < this.settings.minReplanSeconds) return;
    const wanted = this.#planningBudget(now, planned.minFeasibleBudget);
    if (Math.abs(wanted - planned.plannedBudget) > this.settings.replanThreshold * planned.plannedBudget) {
      this.#replan(now);
    }
  }

  /** The plan's budget (core/planning-budget.ts), never below the minimum feasible one. */
  #planningBudget(now: number, minFeasible: number): number {
    return Math.max(minFeasible, this.#budgets(now, minFeasible).planned);
  }

  #budgets(now: number, minFeasible: number): { planned: number; uncapped: number } {
    const { budget, budgetWindowHours, warmup, credit, planCap, ceiling } = this.settings;
    const input = {
      budget,
      // The control's budget as the service's planInputs hands it: core/planning-budget.ts raises it to
      // the minimum where a credit applies, one rule for both (they differed: found in review).
      controlBudget: this.#control.controlBudget(),
      warmupFactor: warmupFactor((now - (this.#firstArrival ?? now)) / 3600, warmup),
      loadNeeds: minFeasible,
      unspentGpuHours: unspentInLookback(
        ceiling ?? DEFAULT_SPEND_CEILING,
        budget,
        budgetWindowHours,
        this.#control,
      ),
    };
    return planningBudget(input, { credit, planCap });
  }

  /** The rates to plan for: online, the estimate plus the backlog (the service's loadRates); or the trace's. */
  #loadRates(now: number): Record<string, number> {
    if (!this.#online) return this.context.traceRatesPerHour;
    const rates = this.#online.ratesAt(now);
    for (const [app, waiting] of this.#waiting) {
      if (waiting > 0) rates[app] = (rates[app] ?? 0) + waiting / this.settings.budgetWindowHours;
    }
    return rates;
  }

  /** The service's re-plan test: some class's load moved by more than `replanOnMove` since the plan. */
  #loadMoved(now: number): boolean {
    if (!this.#online) return false;
    return ratesMoved(this.#plannedRates, this.#loadRates(now), this.#online.options.replanOnMove);
  }

  #replan(now: number): void {
    if (this.settings.price !== null) {
      this.#planned = this.#planner.atPrice(this.settings.price);
      this.#plannedAt = now;
      this.#replanDue = false;
      this.replans++;
      return;
    }
    const rates = this.#loadRates(now);
    // No arrival left in the window (a long drain): keep the plan there is.
    if (this.#planned !== undefined && Object.keys(rates).length === 0) {
      this.#plannedAt = now;
      this.#replanDue = false;
      return;
    }
    this.#plannedRates = rates;
    const minFeasible = this.#planner.minFeasible(rates);
    const budgets = this.#budgets(now, minFeasible);
    this.#uncapped = budgets.uncapped;
    const budgetNow = Math.max(minFeasible, budgets.planned);
    const exact = this.#planner.plan(rates, budgetNow);
    this.#planned = this.#clear?.floored(now, rates, exact) ?? exact;
    this.#plannedAt = now;
    this.#replanDue = false;
    this.replans++;
  }

  /**
   * A job keeps the width it got on entering a statistical epoch for the whole epoch (where BOA's model
   * rescales anyway), so a re-plan does not rescale running jobs for a small nudge; only a move of
   * `relockFactor` or more (say the budget control widening the last jobs of a draining run) does.
   */
  #lockedWidth(job: JobView, planWidth: number): number {
    const lock = this.#locks.get(job.id);
    const factor = this.settings.relockFactor;
    if (lock === undefined || lock.epoch !== job.statEpoch || relocks(planWidth, lock.width, factor)) {
      this.#locks.set(job.id, { epoch: job.statEpoch, width: planWidth });
      return planWidth;
    }
    return lock.width;
  }

  /** The job's expected work left over its class's weight, the queue's key (core/work-left.ts, as the service reads it). */
  #weightedWorkLeft(job: JobView): number | undefined {
    const profile = this.#classes.get(job.app);
    const done = workDoneInEpochFromFraction(profile, job.statEpoch, job.progressFraction);
    return weightedWorkLeft(profile, job.statEpoch, done);
  }

  #drawOf(job: JobView): number {
    let u = this.#draws.get(job.id);
    if (u === undefined) {
      u = this.#drawer.draw(job.app);
      this.#draws.set(job.id, u);
    }
    return u;
  }
}

/** Width at a statistical epoch; a class the plan lacks (never with trace rates) runs on one GPU. */
function widthAt(widths: Widths | undefined, epoch: number): number {
  if (widths === undefined || widths.length === 0) return 1;
  return widths[Math.min(epoch, widths.length - 1)] as number;
}
