/**
 * One simulation as the commands run it: a trace (optionally restricted to some applications), a
 * registered policy and its options, in; the result object of `simulate --format json` out.
 */
import type { ProfileFile } from '../core/profile.ts';
import { arrivalRatesPerHour, type TraceJob } from '../core/trace.ts';
import type { EngineConfig } from './engine/config.ts';
import { formatClusterSpec, GPU_TYPE_SPECS } from './gpu-types.ts';
import { runSimulation, type SimulationRun, type TickSnapshot } from './engine/engine.ts';
import type { PolicyOptions } from './policy.ts';
import { findPolicy } from './policies/index.ts';
import { APP_NAMES, APP_SPECS, isAppName } from './truth/apps.ts';
import { loadAppTables } from './truth/load.ts';
import { createJobTruth, type JobTruth } from './truth/model.ts';

/** The printed result: these fields first, in this order (the contract), then extras. */
export interface SimResult {
  readonly policy: string;
  readonly budget: number | null;
  readonly jobs: number;
  readonly completed: number;
  readonly avgJctSeconds: number;
  readonly p95JctSeconds: number;
  readonly allocatedGpuHoursPerHour: number;
  readonly paidGpuHoursPerHour: number;
  readonly rescales: number;
  readonly simMs: number;
  readonly target: number | null;
  /** boa-price's knob; null for every other policy. */
  readonly price: number | null;
  readonly solver: string | null;
  readonly rates: string | null;
  readonly seed: number;
  readonly avgQueueSeconds: number;
  readonly spanHours: number;
  readonly peakNodes: number;
  readonly p50JctSeconds: number;
  readonly p99JctSeconds: number;
  readonly arrivalSpanHours: number;
  /** The cluster's node pools (`g4dn:8,p3:4`), or null for the default t4 cluster sized by the knob. */
  readonly cluster: string | null;
  /** Jobs with a deadline that met it; NaN (null in JSON) when no job has one. */
  readonly deadlineSatisfactionRate: number;
  readonly interactiveJobs: number;
  readonly avgInteractiveQueueSeconds: number;
  /** Allocated / paid GPU-seconds per GPU type. */
  readonly utilizationByType: Readonly<Record<string, number>>;
  /** The most paid in any 24 hours, per hour: what a 24-hour budget window would have had to allow. */
  readonly peakDayPaidGpuHoursPerHour: number;
}

export interface SimulateRequest {
  readonly trace: readonly TraceJob[];
  /** Only these applications' jobs run; arrival rates still come from the whole file's span. */
  readonly apps?: readonly string[];
  readonly policy: string;
  readonly options: PolicyOptions;
  readonly seed?: number;
  readonly profiles: ProfileFile;
  readonly truthOf: (app: string) => JobTruth;
  readonly config?: Partial<EngineConfig>;
  readonly observer?: (tick: TickSnapshot) => void;
  /** Wall clock for simMs only (simulated time never reads it). */
  readonly wallClock?: () => number;
}

export function simulate(request: SimulateRequest): { result: SimResult; run: SimulationRun } {
  const definition = findPolicy(request.policy);
  const rates = arrivalRatesPerHour(request.trace, request.apps);
  const keep = new Set(Object.keys(rates));
  const jobs = request.trace.filter((job) => keep.has(job.application));
  const seed = request.seed ?? 1;
  const wall = request.wallClock ?? (() => performance.now());
  const pools = request.config?.cluster;
  // A fixed-cluster policy on given node pools: its budget is their GPUs (one cluster, no sweep).
  const options =
    pools !== undefined && definition.mode === 'fixed'
      ? {
          ...request.options,
          budget: pools.reduce((sum, p) => sum + p.nodes * GPU_TYPE_SPECS[p.type].gpusPerNode, 0),
        }
      : request.options;
  const began = wall();
  const run = runSimulation({
    jobs,
    truthOf: request.truthOf,
    profiles: request.profiles,
    policy: definition,
    options,
    traceRatesPerHour: rates,
    seed,
    ...(request.config ? { config: request.config } : {}),
    ...(request.observer ? { observer: request.observer } : {}),
  });
  const simMs = wall() - began;
  const m = run.metrics;
  const { budget, target, price, solver, rates: rateSource } = options;
  const result: SimResult = {
    policy: definition.name,
    budget: budget ?? null,
    jobs: m.jobs,
    completed: m.completed,
    avgJctSeconds: m.avgJctSeconds,
    p95JctSeconds: m.p95JctSeconds,
    allocatedGpuHoursPerHour: m.allocatedGpuHoursPerHour,
    paidGpuHoursPerHour: m.paidGpuHoursPerHour,
    rescales: m.rescales,
    simMs,
    target: target ?? null,
    price: price ?? null,
    // Only boa reads rates and a solver (boa-price plans exact only): another policy's row never says
    // oracle rates, which it never had. boa's default is online, and an oracle run says so in every row.
    solver: definition.name === 'boa' ? (solver ?? null) : null,
    rates: definition.name === 'boa' ? (rateSource ?? 'online') : null,
    seed,
    avgQueueSeconds: m.avgQueueSeconds,
    spanHours: m.spanHours,
    peakNodes: m.peakNodes,
    p50JctSeconds: m.p50JctSeconds,
    p99JctSeconds: m.p99JctSeconds,
    arrivalSpanHours: m.arrivalSpanHours,
    cluster: pools === undefined ? null : formatClusterSpec(pools),
    deadlineSatisfactionRate: m.deadlineSatisfactionRate,
    interactiveJobs: m.interactiveJobs,
    avgInteractiveQueueSeconds: m.avgInteractiveQueueSeconds,
    utilizationByType: m.utilizationByType,
    peakDayPaidGpuHoursPerHour: m.peakDayPaidGpuHoursPerHour,
  };
  return { result, run };
}

export class UnknownAppError extends Error {
  override name = 'UnknownAppError';
}

/** Ground truth per application from the measured data folder, loaded once per app. */
export function truthProvider(dataDir: string): (app: string) => JobTruth {
  const cache = new Map<string, JobTruth>();
  return (app) => {
    let truth = cache.get(app);
    if (truth === undefined) {
      if (!isAppName(app)) {
        throw new UnknownAppError(
          `no measured data for application "${app}"; known: ${APP_NAMES.join(', ')}`,
        );
      }
      truth = createJobTruth(loadAppTables(dataDir, app), APP_SPECS[app]);
      cache.set(app, truth);
    }
    return truth;
  };
}
