/**
 * The trace-driven simulator's event loop. Decisions happen at scheduling ticks; between ticks jobs
 * progress continuously per the ground truth at their placement; completions are exact events that
 * free GPUs at once (for the next tick's decision); arrivals become visible at the next tick.
 */
import { gpusPerNodeOf } from '../../core/exec/placement.ts';
import type { ProfileFile } from '../../core/profile.ts';
import type { TraceJob } from '../../core/trace.ts';
import { DEFAULT_GPU_TYPE, type GpuType } from '../gpu-types.ts';
import type { ClusterView, JobView, Policy, PolicyDefinition, PolicyOptions } from '../policy.ts';
import type { JobTruth } from '../truth/model.ts';
import { hardwareView } from '../truth/stage-profile.ts';
import { VirtualClock } from './clock.ts';
import { SimCluster } from './cluster.ts';
import { checkClusterForMode, type EngineConfig, resolveEngineConfig } from './config.ts';
import { maxPaidInWindow } from './window-paid.ts';
import { advanceInterval } from './interval.ts';
import type { SimJob } from './job.ts';
import { BUDGET_WINDOW_SECONDS, type JobRecord, type RunMetrics, summarize } from './metrics.ts';
import { fixedNodes, labelJobs, makeJobs, oracleFor } from './setup.ts';
import { validateDecisionWithGroups } from './validate.ts';

export { SimulationError } from './setup.ts';

export interface SimulationInput {
  /** The jobs to run (any order; the engine sorts them by arrival). */
  readonly jobs: readonly TraceJob[];
  /** Ground truth per application (the engine calls it once per app). */
  readonly truthOf: (app: string) => JobTruth;
  /** What the planners see; also fixes each class's statistical epochs for JobView.statEpoch. */
  readonly profiles: ProfileFile;
  readonly policy: PolicyDefinition;
  readonly options: PolicyOptions;
  readonly traceRatesPerHour: Readonly<Record<string, number>>;
  readonly seed?: number;
  readonly config?: Partial<EngineConfig>;
  readonly clock?: VirtualClock;
  /** Sees every tick after the decision is applied (tests check invariants independently with it). */
  readonly observer?: (tick: TickSnapshot) => void;
}

export interface TickSnapshot {
  readonly tick: number;
  readonly cluster: ClusterView;
  /** Active jobs and their allocations after the decision. */
  readonly allocations: ReadonlyMap<number, readonly number[]>;
  readonly activeJobs: readonly number[];
  /** The active jobs as the policy saw them at this tick (before the decision). */
  readonly jobs: readonly JobView[];
  /** The decision's co-location groups (each group's GPUs counted once on its nodes). */
  readonly colocate: readonly (readonly number[])[];
}

export interface SimulationRun {
  readonly metrics: RunMetrics;
  readonly jobs: readonly JobRecord[];
  /** True when every job completed before the horizon. */
  readonly finished: boolean;
  readonly config: EngineConfig;
}

export function runSimulation(input: SimulationInput): SimulationRun {
  const config = resolveEngineConfig(input.config);
  checkClusterForMode(config, input.policy.name, input.policy.mode);
  const jobs = makeJobs(input.jobs, input.profiles, input.truthOf);
  const first = jobs[0] as SimJob;
  const start = first.arrival;
  const horizon = (jobs[jobs.length - 1] as SimJob).arrival + config.horizonSeconds;
  const clock = input.clock ?? new VirtualClock(start);
  clock.advanceTo(start);
  const { policy: definition, options } = input;
  const fixed = definition.mode === 'fixed';
  const cluster = new SimCluster(config.gpusPerNode, config.bootSeconds, config.releaseLagSeconds);
  const pools = config.cluster;
  const poolNodes = pools?.reduce((sum, p) => sum + p.nodes, 0);
  const maxNodes =
    poolNodes ?? (fixed ? fixedNodes(definition.name, options, config.gpusPerNode) : config.maxNodes);
  if (fixed && pools !== undefined) for (const p of pools) cluster.request(p.nodes, start, true, p.type);
  else if (fixed) cluster.request(maxNodes, start, true);
  const types: GpuType[] = fixed && pools !== undefined ? pools.map((p) => p.type) : [DEFAULT_GPU_TYPE];
  const hardware = hardwareView(input.truthOf, types, config.gpusPerNode);
  labelJobs(jobs, input.jobs, config, hardware, input.seed ?? 1);

  const active: SimJob[] = [];
  const byId = new Map(jobs.map((j) => [j.id, j]));
  const policy = definition.create(
    {
      profiles: input.profiles,
      gpusPerNode: config.gpusPerNode,
      tickSeconds: config.tickSeconds,
      rescaleSeconds: config.rescaleSeconds,
      oracle: oracleFor(byId),
      traceRatesPerHour: input.traceRatesPerHour,
      seed: input.seed ?? 1,
      hardware,
      maxGroupSize: config.maxGroupSize,
    },
    options,
  );

  let arrived = 0;
  let lastCompletion = start;
  // Admits the arrivals up to `time` (inclusive, or strictly before it), calling onArrival at each.
  const admitUpTo = (time: number, inclusive = true) => {
    const due = (arrival: number) => arrival < time || (inclusive && arrival === time);
    while (arrived < jobs.length && due((jobs[arrived] as SimJob).arrival)) {
      const job = jobs[arrived++] as SimJob;
      clock.advanceTo(Math.max(clock.now(), job.arrival));
      active.push(job);
      policy.onArrival?.(job.view(), job.arrival);
    }
  };
  admitUpTo(start);

  let now = start;
  let tick = 0;
  for (;;) {
    if (active.length === 0 && (fixed || cluster.present().length === 0)) {
      if (arrived === jobs.length) break;
      // Nothing to decide or to pay for: skip to the tick at or after the next arrival.
      const ticks = Math.ceil(((jobs[arrived] as SimJob).arrival - now) / config.tickSeconds);
      now += ticks * config.tickSeconds;
      tick += ticks;
      admitUpTo(now);
      clock.advanceTo(now);
      continue;
    }
    const groups = decideAndApply(
      policy,
      definition.name,
      tick,
      now,
      active,
      cluster,
      config,
      maxNodes,
      fixed,
      input.observer,
    );
    const next = now + config.tickSeconds;
    const completions = advanceInterval(active, groups, now, next, config.colocationInterference);
    completions.sort((a, b) => (a.completedAt as number) - (b.completedAt as number) || a.id - b.id);
    // Callbacks in time order: completions and arrivals of this interval interleaved.
    for (const job of completions) {
      admitUpTo(job.completedAt as number, false);
      clock.advanceTo(Math.max(clock.now(), job.completedAt as number));
      lastCompletion = Math.max(lastCompletion, job.completedAt as number);
      policy.onCompletion?.(job.view(), job.completedAt as number);
    }
    if (completions.length > 0) {
      const done = new Set(completions);
      const still = active.filter((j) => !done.has(j));
      active.length = 0;
      active.push(...still);
    }
    admitUpTo(next);
    clock.advanceTo(next);
    now = next;
    tick++;
    if (arrived === jobs.length && active.length === 0) break;
    if (now >= horizon) break;
  }

  const finished = jobs.every((j) => j.completedAt !== null);
  const end = finished ? lastCompletion : now;
  const records: JobRecord[] = jobs.map((j) => ({
    id: j.id,
    name: j.name,
    app: j.app,
    arrival: j.arrival,
    firstStart: j.firstStart,
    completedAt: j.completedAt,
    rescales: j.rescales,
    attainedGpuSeconds: j.attainedGpuSeconds,
    allocatedGpuSeconds: j.allocatedGpuSeconds,
    runSeconds: j.runSeconds,
    deadline: j.deadline,
    kind: j.kind,
    busyGpuSecondsByType: Object.fromEntries(j.busyByType),
  }));
  const presentTypes = [...new Set(cluster.all().map((n) => n.gpuType))];
  const metrics = summarize(records, {
    start,
    end,
    paidGpuSeconds: cluster.paidGpuSeconds(start, end),
    paidGpuSecondsByType: Object.fromEntries(
      presentTypes.map((type) => [type, cluster.paidGpuSeconds(start, end, type)]),
    ),
    peakNodes: cluster.peakNodes(),
    peakWindowPaidGpuSeconds: maxPaidInWindow(
      cluster.all().map((n) => ({ gpus: n.gpus, from: n.requestedAt, until: n.goneAt })),
      start,
      end,
      BUDGET_WINDOW_SECONDS,
    ),
  });
  return { metrics, jobs: records, finished, config };
}

function decideAndApply(
  policy: Policy,
  name: string,
  tick: number,
  now: number,
  active: readonly SimJob[],
  cluster: SimCluster,
  config: EngineConfig,
  maxNodes: number,
  fixed: boolean,
  observer: SimulationInput['observer'],
): readonly (readonly number[])[] {
  const nodes = cluster.views(now);
  const view: ClusterView = {
    now,
    gpusPerNode: config.gpusPerNode,
    mode: fixed ? 'fixed' : 'autoscaled',
    nodes,
    maxNodes,
  };
  const views = active.map((j) => j.view());
  const decision = policy.decide(view, views);
  const { allocations, groups } = validateDecisionWithGroups(decision, {
    policy: name,
    tick,
    now,
    mode: view.mode,
    maxNodes,
    activeNames: new Map(active.map((j) => [j.id, j.name])),
    nodes,
    maxGroupSize: config.maxGroupSize,
  });
  let typeOf: Map<number, GpuType | undefined> | undefined;
  for (const job of active) {
    const allocation = allocations.get(job.id) ?? [];
    const changed = job.assign(
      allocation,
      allocation.length ? gpusPerNodeOf(allocation) : [],
      now,
      config.rescaleSeconds,
    );
    if (changed || (allocation.length === 0 && job.gpusByType.size > 0)) {
      typeOf ??= new Map(nodes.map((n) => [n.id, n.gpuType]));
      job.gpusByType = countByType(allocation, typeOf);
    }
    if (job.colocatedWith.length > 0) job.colocatedWith = [];
  }
  const byId = groups.length > 0 ? new Map(active.map((j) => [j.id, j])) : new Map<number, SimJob>();
  for (const group of groups) {
    for (const id of group) (byId.get(id) as SimJob).colocatedWith = group.filter((other) => other !== id);
  }
  if (!fixed) resize(cluster, decision.desiredNodes, allocations, now);
  observer?.({
    tick,
    cluster: { ...view, nodes: cluster.views(now) },
    allocations,
    activeJobs: active.map((j) => j.id),
    jobs: views,
    colocate: groups,
  });
  return groups;
}

function countByType(
  allocation: readonly number[],
  typeOf: ReadonlyMap<number, GpuType | undefined>,
): Map<GpuType, number> {
  const counts = new Map<GpuType, number>();
  for (const id of allocation) {
    const type = typeOf.get(id) ?? DEFAULT_GPU_TYPE;
    counts.set(type, (counts.get(type) ?? 0) + 1);
  }
  return counts;
}

/** Boots nodes up to the desired count, or releases empty ones down to it (booting ones first). */
function resize(
  cluster: SimCluster,
  desired: number | undefined,
  allocations: ReadonlyMap<number, readonly number[]>,
  now: number,
): void {
  const present = cluster.present();
  if (desired === undefined || desired === present.length) return;
  if (desired > present.length) {
    cluster.request(desired - present.length, now);
    return;
  }
  const busy = new Set<number>();
  for (const allocation of allocations.values()) for (const id of allocation) busy.add(id);
  const empty = present
    .filter((n) => !busy.has(n.id))
    .sort((a, b) => b.readyAt - a.readyAt || b.id - a.id)
    .slice(0, present.length - desired);
  cluster.release(new Set(empty.map((n) => n.id)), now);
}
