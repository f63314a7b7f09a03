/**
 * The boa policy in the simulator, as the service runs it: look up each job's width in the plan at its
 * statistical epoch, place with the fixed-width executor, and keep the paid time-average at the budget
 * by planning with budget / (paid / allocated).
 */
import { executeWidths } from '../../../core/exec/execute.ts';
import type { MixedPlan, Widths } from '../../../core/plan.ts';
import type { ClassProfile } from '../../../core/profile.ts';
import type { ClusterView, Decision, JobView, Policy, PolicyContext } from '../../policy.ts';
import { StratifiedDraws } from './draws.ts';
import { secondsToNextEpoch } from './lookahead.ts';
import { type OnlineRateOptions, OnlineRates } from './online-rates.ts';
import { PaidRatioEstimator, type PaidRatioOptions } from './paid-ratio.ts';
import { BoaPlanner, type PlannedWidths } from './planner.ts';
import { widthsFor } from './shares.ts';

export interface BoaSettings {
  /** Target paid GPU-hours per hour (time-average). */
  readonly budget: number;
  readonly solver: 'exact' | 'paper';
  readonly rates: 'trace' | 'online';
  /** Online rates: re-plan this often (the service's calculator timer). */
  readonly replanSeconds: number;
  /** Re-plan when the corrected budget moves by more than this fraction since the last plan. */
  readonly replanThreshold: number;
  readonly onlineRates: OnlineRateOptions;
  /** Boot nodes this long before a job's predicted grow (the node group's boot time plus one tick). */
  readonly provisionLeadSeconds: number;
  readonly paidRatio: Omit<PaidRatioOptions, 'priorGpus'>;
}

export class BoaPolicy implements Policy {
  readonly name = 'boa';
  readonly #planner: BoaPlanner;
  readonly #ratio: PaidRatioEstimator;
  readonly #online: OnlineRates | undefined;
  readonly #draws = new Map<number, number>();
  /** Widths each job got from the plan current at its first tick, kept for life. */
  readonly #widths = new Map<number, Widths>();
  readonly #classes: ReadonlyMap<string, ClassProfile>;
  readonly #drawer: StratifiedDraws;
  /** GPUs each job was given at the last tick, to book allocated time (completions mid-interval too). */
  #held = new Map<number, number>();
  #completedGpuSeconds = 0;
  #lastTick: number | undefined;
  #planned: PlannedWidths | undefined;
  #plannedAt = Number.NEGATIVE_INFINITY;
  #unplannedArrival = false;
  /** Plans made, for tests and reports. */
  replans = 0;

  constructor(
    readonly context: PolicyContext,
    readonly settings: BoaSettings,
  ) {
    this.#classes = new Map(context.profiles.classes.map((c) => [c.name, c]));
    this.#planner = new BoaPlanner(context.profiles, settings.solver, context.seed);
    this.#ratio = new PaidRatioEstimator({ ...settings.paidRatio, priorGpus: settings.budget });
    this.#online = settings.rates === 'online' ? new OnlineRates(settings.onlineRates) : undefined;
    this.#drawer = new StratifiedDraws(context.seed);
    if (!this.#online) this.#replan(0);
  }

  /** The current plan (undefined before the first one, with online rates). */
  get planned(): PlannedWidths | undefined {
    return this.#planned;
  }

  get paidRatio(): number {
    return this.#ratio.ratio();
  }

  onArrival(job: JobView, now: number): void {
    this.#draws.set(job.id, this.#drawer.draw(job.app));
    this.#online?.record(job.app, now);
    if (this.#planned?.plan[job.app] === undefined) this.#unplannedArrival = true;
  }

  onCompletion(job: JobView, now: number): void {
    const gpus = this.#held.get(job.id) ?? 0;
    this.#completedGpuSeconds += gpus * (now - (this.#lastTick ?? now));
    this.#held.delete(job.id);
    this.#draws.delete(job.id);
    this.#widths.delete(job.id);
  }

  decide(cluster: ClusterView, jobs: readonly JobView[]): Decision {
    const now = cluster.now;
    this.#book(cluster);
    this.#maybeReplan(now);
    const plan = (this.#planned as PlannedWidths).plan;
    const widest = cluster.maxNodes * cluster.gpusPerNode;
    const ordered = [...jobs].sort((a, b) => a.arrival - b.arrival || a.id - b.id);
    const out = executeWidths(
      ordered.map((job) => {
        const widths = this.#widthsOf(job, plan);
        const width = Math.min(widest, widthAt(widths, job.statEpoch));
        // Boot nodes ahead of a grow the plan makes at the next epoch boundary, so the job finds them ready.
        const cls = this.#classes.get(job.app);
        const soon =
          cls !== undefined && secondsToNextEpoch(cls, job, now) <= this.settings.provisionLeadSeconds;
        const provision = soon ? Math.min(widest, widthAt(widths, job.statEpoch + 1)) : width;
        return { id: job.id, width, current: job.allocation, provision };
      }),
      cluster.nodes,
      { gpusPerNode: cluster.gpusPerNode, maxNodes: cluster.maxNodes, shortfall: 'partial' },
    );
    this.#held = new Map([...out.allocations].map(([id, allocation]) => [id, allocation.length]));
    this.#lastTick = now;
    return { allocations: out.allocations, desiredNodes: out.desiredNodes };
  }

  /** Books the interval since the last tick into the paid / allocated estimate. */
  #book(cluster: ClusterView): void {
    const dt = this.#lastTick === undefined ? 0 : cluster.now - this.#lastTick;
    let allocated = this.#completedGpuSeconds;
    for (const gpus of this.#held.values()) allocated += gpus * dt;
    this.#completedGpuSeconds = 0;
    this.#ratio.observe(cluster.now, new Map(cluster.nodes.map((n) => [n.id, n.gpus])), allocated);
  }

  #maybeReplan(now: number): void {
    const online = this.#online !== undefined;
    const due =
      this.#planned === undefined ||
      this.#unplannedArrival ||
      (online && now - this.#plannedAt >= this.settings.replanSeconds);
    if (due) {
      this.#replan(now);
      return;
    }
    const planned = this.#planned as PlannedWidths;
    const wanted = Math.max(planned.minFeasibleBudget, this.settings.budget / this.#ratio.ratio());
    if (Math.abs(wanted - planned.plannedBudget) > this.settings.replanThreshold * planned.plannedBudget) {
      this.#replan(now);
    }
  }

  #replan(now: number): void {
    const rates = this.#online ? this.#online.ratesAt(now) : this.context.traceRatesPerHour;
    this.#planned = this.#planner.plan(rates, this.settings.budget / this.#ratio.ratio());
    this.#plannedAt = now;
    this.#unplannedArrival = false;
    this.replans++;
  }

  /**
   * The widths a job runs with: drawn from the plan current at its first tick and kept for life, so a
   * re-plan changes only the jobs admitted after it (no rescales of running jobs for a budget nudge).
   */
  #widthsOf(job: JobView, plan: MixedPlan): Widths | undefined {
    let widths = this.#widths.get(job.id);
    if (widths === undefined) {
      widths = widthsFor(plan, job.app, this.#drawOf(job));
      if (widths !== undefined) this.#widths.set(job.id, widths);
    }
    return widths;
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
