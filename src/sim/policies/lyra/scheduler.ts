/**
 * One Lyra round, every tick, on the ready nodes of a fixed cluster: base demands by shortest job
 * first (sjf.ts), the GPUs left as extra workers by a knapsack over JCT reductions (knapsack.ts), then
 * best-fit-decreasing placement (placement.ts). Job times come from the class profiles
 * (../common/remaining.ts).
 * No randomness: the same views give the same decision.
 */
import type { ClusterView, Decision, JobView, PolicyContext } from '../../policy.ts';
import { chooseExtras, type ExtraOption } from './knapsack.ts';
import { placeDecreasing } from './placement.ts';
import { RemainingTime } from '../common/remaining.ts';
import { admitBases, type BaseDemand } from './sjf.ts';

export interface LyraSettings {
  /** A job's base demand: its trace request (default, capped to the cluster) or one GPU. */
  readonly base?: 'request' | 'one';
  /** Let a shorter waiting job take a running job's base (default false: running jobs keep theirs). */
  readonly preemptive?: boolean;
  /** Restarts a running job's width change is charged in the knapsack (default RESTART_CHARGE). */
  readonly restartCharge?: number;
}

/**
 * Hysteresis: a width change of a running job is charged ten restarts (300 s at the engine's 30 s) of
 * estimated JCT, not one. The knapsack values extra workers as if a job kept them to the end, but they
 * are the first GPUs reclaimed for a later arrival's base: charged one restart, a quarter of all width
 * changes on the 960-job trace were undone within five ticks (two restarts each, GPUs held). See
 * README.md for the measurements.
 */
export const RESTART_CHARGE = 10;

export class LyraScheduler {
  readonly #model: RemainingTime;
  readonly #base: 'request' | 'one';
  readonly #preemptive: boolean;
  readonly #changeSeconds: number;

  constructor(
    readonly context: PolicyContext,
    settings: LyraSettings = {},
  ) {
    this.#model = new RemainingTime(context.profiles.classes);
    this.#base = settings.base ?? 'request';
    this.#preemptive = settings.preemptive ?? false;
    this.#changeSeconds = (settings.restartCharge ?? RESTART_CHARGE) * context.rescaleSeconds;
  }

  decide(cluster: ClusterView, jobs: readonly JobView[]): Decision {
    const ready = cluster.nodes.filter((n) => n.ready);
    const gpus = ready.reduce((sum, n) => sum + n.gpus, 0);
    if (gpus === 0 || jobs.length === 0) return { allocations: new Map() };
    const byId = new Map(jobs.map((job) => [job.id, job]));
    const demands: BaseDemand[] = jobs.map((job) => {
      const base = this.baseOf(job, gpus);
      return {
        id: job.id,
        base,
        remaining: this.#model.seconds(job, base),
        arrival: job.arrival,
        running: job.allocation.length > 0,
      };
    });
    const { admitted, free } = admitBases(demands, gpus, this.#preemptive);
    const bases = new Map(demands.map((d) => [d.id, d.base]));
    const admittedJobs = admitted.map((id) => byId.get(id) as JobView);
    const choice = chooseExtras(
      admittedJobs.map((job) => this.extraOptions(job, bases.get(job.id) as number, free)),
      free,
    );
    const widths = new Map<number, number>();
    admittedJobs.forEach((job, i) =>
      widths.set(job.id, (bases.get(job.id) as number) + (choice.extras[i] ?? 0)),
    );
    const allocations = placeDecreasing(
      jobs.map((job) => ({ id: job.id, width: widths.get(job.id) ?? 0, current: job.allocation })),
      ready,
    );
    return { allocations };
  }

  /** GPUs the job needs to run at all on a cluster of `gpus` GPUs. */
  baseOf(job: JobView, gpus: number): number {
    return this.#base === 'one' ? 1 : Math.min(gpus, Math.max(1, job.requestedGpus));
  }

  /**
   * Every width above the base that the profile lists (plus the job's current width), up to what is
   * free, valued by the seconds of remaining time it saves over the base. For a running job, every
   * width but its current one also carries the change charge (RESTART_CHARGE restarts), so widths
   * stay put from tick to tick unless a change saves clearly more than it costs.
   */
  extraOptions(job: JobView, base: number, free: number): ExtraOption[] {
    const widths = new Set(this.#model.widths(job.app));
    if (job.allocation.length > 0) widths.add(job.allocation.length);
    const cost = (w: number) =>
      this.#model.seconds(job, w) +
      (job.allocation.length > 0 && w !== job.allocation.length ? this.#changeSeconds : 0);
    const baseCost = cost(base);
    const options: ExtraOption[] = [];
    for (const w of widths) {
      if (w <= base || w > base + free) continue;
      options.push({ extra: w - base, value: baseCost - cost(w) });
    }
    return options;
  }
}
