/**
 * One Pollux scheduling round: every tick, re-choose all active jobs' allocations to maximise the
 * fairness-weighted fitness on the ready nodes (optimize.ts, placement.ts), and, when autoscaling,
 * decide the cluster size from the utility window (autoscale.ts). No randomness: the same inputs give
 * the same decisions, whatever the seed.
 */
import type { Allocation, ClusterView, Decision, JobView, NodeView, PolicyContext } from '../../policy.ts';
import {
  clusterUtility,
  scaleVerdict,
  searchNodeCount,
  type UtilityBand,
  UtilityWindow,
} from './autoscale.ts';
import { FAIRNESS_POWER, fitnessCost, restartFactor } from './fitness.ts';
import { planWidths } from './optimize.ts';
import { type PlacementNode, placeJobs } from './placement.ts';
import {
  buildJobCurve,
  explorationCap,
  fairShareGoodput,
  GoodputTable,
  type JobCurve,
  MAX_REPLICAS,
} from './speedup.ts';

interface Round {
  readonly jobs: readonly JobView[];
  readonly curves: readonly JobCurve[];
  readonly table: GoodputTable;
}

export interface PolluxSettings {
  /** The autoscaler's band; null for a fixed cluster. */
  readonly band: UtilityBand | null;
  /**
   * AdaptDL's limit of twice the most GPUs a job has run on. Default off: the BOA paper's experiment
   * seeded AdaptDL's profiler with the job profiles, which lifts it (see README.md).
   */
  readonly explorationCap?: boolean;
  /**
   * Ticks of utility averaged before the autoscaler acts. Default 1: the BOA paper's Pollux resizes
   * whenever efficiency leaves the band, on its 60 s quantum (AdaptDL's simulator averages 15).
   */
  readonly windowTicks?: number;
  /**
   * Take no utility sample while a node boots. Default off: AdaptDL has no such freeze (its simulator
   * has no boot delay); without it, utility is measured on the ready GPUs only.
   */
  readonly bootFreeze?: boolean;
  /**
   * At most one distributed job per node, Pollux's avoidance of network interference. Default off: the
   * simulator's ground truth has no network interference between jobs (boa does not avoid it either),
   * so the rule only spreads and restarts Pollux's jobs (README.md).
   */
  readonly interferenceAvoidance?: boolean;
}

/** The strongest defensible Pollux (README.md: "Defaults"). */
export const POLLUX_DEFAULTS = {
  explorationCap: false,
  windowTicks: 1,
  bootFreeze: false,
  interferenceAvoidance: false,
} as const;

export class PolluxScheduler {
  /** Most GPUs each job has run on: the base of its exploration cap. */
  readonly #maxSeen = new Map<number, number>();
  readonly #window: UtilityWindow;
  /** The autoscaler's band; pollux-budget moves it between ticks. */
  band: UtilityBand | null;
  readonly #explorationCap: boolean;
  readonly #bootFreeze: boolean;
  readonly #interferenceAvoidance: boolean;

  constructor(
    readonly context: PolicyContext,
    settings: PolluxSettings,
  ) {
    this.band = settings.band;
    this.#explorationCap = settings.explorationCap ?? POLLUX_DEFAULTS.explorationCap;
    this.#bootFreeze = settings.bootFreeze ?? POLLUX_DEFAULTS.bootFreeze;
    this.#interferenceAvoidance = settings.interferenceAvoidance ?? POLLUX_DEFAULTS.interferenceAvoidance;
    this.#window = new UtilityWindow(settings.windowTicks ?? POLLUX_DEFAULTS.windowTicks);
  }

  decide(cluster: ClusterView, views: readonly JobView[]): Decision {
    const jobs = [...views].sort((a, b) => a.arrival - b.arrival || a.id - b.id);
    this.#rememberWidths(jobs);
    const table = new GoodputTable(this.context.oracle, cluster.gpusPerNode);
    const curves = jobs.map((job) =>
      buildJobCurve(
        job,
        table,
        this.#explorationCap ? explorationCap(this.#maxSeen.get(job.id) ?? 0) : MAX_REPLICAS,
        restartFactor(
          Math.max(0, cluster.now - job.arrival),
          Math.max(0, job.rescales - 1),
          this.context.rescaleSeconds,
        ),
      ),
    );
    const round: Round = { jobs, curves, table };
    const ready = cluster.nodes.filter((n) => n.ready);
    if (this.band === null) return { allocations: this.#allocate(round, ready) };
    const desiredNodes = this.#desiredNodes(round, cluster, this.band);
    const allocations = this.#allocate(round, nodesToUse(ready, desiredNodes, jobs));
    return { allocations, desiredNodes };
  }

  #rememberWidths(jobs: readonly JobView[]): void {
    const active = new Set(jobs.map((j) => j.id));
    for (const id of this.#maxSeen.keys()) if (!active.has(id)) this.#maxSeen.delete(id);
    for (const job of jobs) {
      this.#maxSeen.set(job.id, Math.max(this.#maxSeen.get(job.id) ?? 0, job.allocation.length));
    }
  }

  #desiredNodes(round: Round, cluster: ClusterView, band: UtilityBand): number {
    const present = cluster.nodes.length;
    if (round.jobs.length === 0) {
      this.#window.clear();
      return 0;
    }
    const ready = cluster.nodes.filter((n) => n.ready).length;
    if (present > 0) {
      // A booting node is paid but cannot be used yet (AdaptDL's simulator has no boot delay). With the
      // freeze, no sample is taken while one boots; without it, utility is that of the ready GPUs.
      if (this.#bootFreeze && ready < present) return present;
      if (ready === 0) return present;
      const speedups = round.jobs.map((job, j) =>
        job.allocation.length === 0
          ? 0
          : round.table.onAllocation(job.id, job.allocation) / oneGpu(round.curves[j] as JobCurve),
      );
      const mean = this.#window.push(clusterUtility(speedups, ready * cluster.gpusPerNode));
      if (mean === undefined || scaleVerdict(mean, band, ready, 1, cluster.maxNodes) === 'hold') {
        return present;
      }
    }
    // Jobs but no nodes at all, or the window's mean left the band: pick the size closest to the target.
    this.#window.clear();
    const widest = round.curves.reduce((sum, c) => sum + (c.options[c.options.length - 1]?.width ?? 1), 0);
    const hi = Math.max(1, Math.min(cluster.maxNodes, Math.ceil(widest / cluster.gpusPerNode)));
    return searchNodeCount((n) => plannedUtility(round, n * cluster.gpusPerNode), 1, hi, band.target);
  }

  #allocate(round: Round, nodes: readonly PlacementNode[]): Map<number, Allocation> {
    const gpus = nodes.reduce((sum, n) => sum + n.gpus, 0);
    if (gpus === 0 || round.jobs.length === 0) return new Map();
    const fair = round.curves.map((c) => fairShareGoodput(c, round.table, gpus, round.jobs.length));
    const plan = planWidths(round.curves, fair, gpus);
    const requests = round.jobs.map((job, j) => {
      const option = plan.chosen[j] ?? null;
      return { id: job.id, width: option?.width ?? 0, keep: option?.keep ? job.allocation : null };
    });
    const staying = placeJobs(requests, nodes, true, this.#interferenceAvoidance);
    if (asPlanned(staying, requests, round)) return staying;
    // Jobs kept in place fragmented the nodes: also try moving everyone, and take the fitter one.
    const moved = placeJobs(requests, nodes, false, this.#interferenceAvoidance);
    return realisedCost(moved, round, fair) < realisedCost(staying, round, fair) ? moved : staying;
  }
}

function oneGpu(curve: JobCurve): number {
  return curve.oneGpuGoodput > 0 ? curve.oneGpuGoodput : Number.POSITIVE_INFINITY;
}

/** The utility the optimiser's plan would reach on a cluster of `gpus` GPUs (packed placements). */
function plannedUtility(round: Round, gpus: number): number {
  const fair = round.curves.map((c) => fairShareGoodput(c, round.table, gpus, round.jobs.length));
  const plan = planWidths(round.curves, fair, gpus);
  const speedups = plan.chosen.map((option, j) =>
    option === null ? 0 : option.goodput / oneGpu(round.curves[j] as JobCurve),
  );
  return clusterUtility(speedups, gpus);
}

/** The fitness terms of the allocations as placed (restart factor wherever an allocation changed). */
function realisedCost(
  allocations: ReadonlyMap<number, Allocation>,
  round: Round,
  fair: readonly number[],
): number {
  return round.jobs.reduce((sum, job, j) => {
    const allocation = allocations.get(job.id) ?? [];
    const fairGoodput = fair[j] as number;
    let speedup = 0;
    if (allocation.length > 0 && fairGoodput > 0) {
      const factor = sameAllocation(allocation, job.allocation)
        ? 1
        : (round.curves[j] as JobCurve).restartFactor;
      speedup = (factor * round.table.onAllocation(job.id, allocation)) / fairGoodput;
    }
    return sum + fitnessCost(speedup, FAIRNESS_POWER);
  }, 0);
}

/** True when every job got its planned width, kept where planned, packed on the fewest nodes otherwise. */
function asPlanned(
  allocations: ReadonlyMap<number, Allocation>,
  requests: readonly { id: number; width: number; keep: Allocation | null }[],
  round: Round,
): boolean {
  const gpusPerNode = round.table.gpusPerNode;
  return requests.every((r) => {
    const allocation = allocations.get(r.id) ?? [];
    if (allocation.length !== r.width) return false;
    if (r.keep !== null) return sameAllocation(allocation, r.keep);
    return new Set(allocation).size === Math.max(0, Math.ceil(r.width / gpusPerNode));
  });
}

/** When shrinking, only the `desired` ready nodes holding the most of the current allocations. */
function nodesToUse(ready: readonly NodeView[], desired: number, jobs: readonly JobView[]): NodeView[] {
  if (desired >= ready.length) return [...ready];
  const used = new Map<number, number>();
  for (const job of jobs) for (const id of job.allocation) used.set(id, (used.get(id) ?? 0) + 1);
  return [...ready]
    .sort((a, b) => (used.get(b.id) ?? 0) - (used.get(a.id) ?? 0) || a.id - b.id)
    .slice(0, desired);
}

function sameAllocation(a: Allocation, b: Allocation): boolean {
  if (a.length !== b.length) return false;
  const x = [...a].sort((p, q) => p - q);
  const y = [...b].sort((p, q) => p - q);
  return x.every((v, i) => v === y[i]);
}
