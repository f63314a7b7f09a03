/**
 * The contract between the simulator and every scheduling policy (BOA and the baselines).
 * Policies see what a real scheduler would: the job-class profiles, what jobs report, and the cluster.
 * Ground truth stays inside the engine; policies whose papers fit a job model online (Pollux and
 * kin) get a GoodputOracle instead, which answers from the truth model as if their fit were perfect
 * (documented per policy: an advantage to the baselines, never to boa).
 */
import type { ProfileFile } from '../core/profile.ts';
import type { GpuType } from './gpu-types.ts';
import type { JobKind } from './truth/labels.ts';

export type { GpuType } from './gpu-types.ts';
export type { JobKind } from './truth/labels.ts';

/** Node id per allocated GPU, ascending: [3, 3, 3, 3, 7, 7] = 4 GPUs on node 3 and 2 on node 7. */
export type Allocation = readonly number[];

/**
 * The engine always fills the fields marked optional below (deadline, kind, colocatedWith, gpuType,
 * hardware, maxGroupSize); they are optional only so hand-made views in tests need not. Read them with
 * the defaults a homogeneous t4 cluster has: no deadline (Infinity), batch, alone, t4, no co-location.
 */
export interface JobView {
  readonly id: number;
  readonly name: string;
  /** Class (application) name, as in the profiles. */
  readonly app: string;
  /** Arrival time, seconds of simulated time. */
  readonly arrival: number;
  /** The user's original request from the trace (reservation baselines only). */
  readonly requestedGpus: number;
  readonly requestedBatch: number;
  /** Statistical progress done, as a fraction of the whole job (0..1). */
  readonly progressFraction: number;
  /** Index of the job's current statistical epoch in its class profile. */
  readonly statEpoch: number;
  /** Current allocation; empty while waiting. */
  readonly allocation: Allocation;
  /** Rescales and restarts so far (the first start included). */
  readonly rescales: number;
  /** Until this time the job is restarting (no progress, GPUs held); null when not. */
  readonly restartingUntil: number | null;
  /** GPU-seconds held so far. */
  readonly attainedGpuSeconds: number;
  /** Seconds with at least one GPU so far. */
  readonly runSeconds: number;
  /**
   * Absolute deadline (simulated seconds): the trace's `deadline` column, or generated (arrival + the
   * job's isolated runtime x a slack drawn from N(8, 2), as CUCKOO's evaluation); Infinity when none.
   */
  readonly deadline?: number;
  /** The user's label: the trace's `kind` column, or derived from the job's duration (labels.ts). */
  readonly kind?: JobKind;
  /** The other jobs interleaved on this job's GPUs (Decision.colocate); empty when it runs alone. */
  readonly colocatedWith?: readonly number[];
}

export interface NodeView {
  readonly id: number;
  readonly gpus: number;
  /** Its GPUs' type (every GPU of a node has the same); t4 on a homogeneous g4dn cluster. */
  readonly gpuType?: GpuType;
  /** False while booting; allocations may only use ready nodes. */
  readonly ready: boolean;
  readonly readyAt: number;
}

export interface ClusterView {
  readonly now: number;
  readonly gpusPerNode: number;
  readonly mode: 'fixed' | 'autoscaled';
  /** Nodes requested and not released: ready or booting. */
  readonly nodes: readonly NodeView[];
  /** Upper bound on nodes (autoscaled) or the fixed cluster's size. */
  readonly maxNodes: number;
}

export interface Decision {
  /** Complete: every active job's allocation after this tick; a job left out waits with no GPUs. */
  readonly allocations: ReadonlyMap<number, Allocation>;
  /** Autoscaled mode: the node count wanted (the engine boots or releases empty nodes to reach it). */
  readonly desiredNodes?: number;
  /**
   * Co-location: groups of 2..maxGroupSize active jobs interleaved on the same GPUs. Every job of a group
   * must have the identical non-empty allocation; the group's GPUs count once toward node capacity, and
   * each member runs slower by the engine's co-location model. A job is in at most one group.
   */
  readonly colocate?: readonly (readonly number[])[];
}

/**
 * One optimizer step's stages on one GPU type, milliseconds (a class's stage profile), at the batch the
 * job picks at that width in its first data epoch (accumulation steps, if any, are in forward/backward).
 */
export interface StageTimes {
  readonly forwardMs: number;
  readonly backwardMs: number;
  /** Gradient synchronisation not hidden behind compute. */
  readonly commMs: number;
  /** The batch these are for: the whole step's total batch and its gradient-accumulation steps. */
  readonly totalBatch?: number;
  readonly accumSteps?: number;
}

/**
 * What policies know about GPU types: the stage profiles of data/stage-profiles.json (derived from the
 * measured t4 throughput, scaled per type). Profile knowledge, the same for every policy.
 */
export interface HardwareView {
  /** GPU types of the cluster, in its pool order (fixed mode), or t4 alone (autoscaled g4dn). */
  readonly types: readonly GpuType[];
  /** An iteration of `app` at `width` GPUs (packed 4 per node) on `type`, at the class's reference batch. */
  stages(app: string, type: GpuType, width: number): StageTimes;
  /** How much faster `app` runs on `type` than on t4 at `width` (iteration time on t4 / on type). */
  speedFactor(app: string, type: GpuType, width: number): number;
}

/** Goodput per second of a job at a placement (GPUs per node), at its current progress and best batch. */
export interface GoodputOracle {
  goodput(jobId: number, gpusPerNode: readonly number[]): number;
}

export interface PolicyContext {
  readonly profiles: ProfileFile;
  readonly gpusPerNode: number;
  readonly tickSeconds: number;
  readonly rescaleSeconds: number;
  readonly oracle: GoodputOracle;
  /** Arrival rates per class from the trace (jobs/hour), for policies that plan with known rates. */
  readonly traceRatesPerHour: Readonly<Record<string, number>>;
  readonly seed: number;
  readonly hardware?: HardwareView;
  /** The largest co-location group the engine runs (Decision.colocate); 1 = no co-location. */
  readonly maxGroupSize?: number;
}

export interface PolicyOptions {
  /** GPU-hours per hour: boa's budget, or a fixed cluster's size in GPUs. */
  readonly budget?: number;
  /** Target cluster efficiency (pollux-autoscale). */
  readonly target?: number;
  /** Seconds of completion time one more GPU-second must save (boa-price). */
  readonly price?: number;
  readonly solver?: 'exact' | 'paper';
  /**
   * boa's arrival rates: online (estimated as the service does, default); prior (online, the estimator
   * starting from the trace's own rates as the service's priorRates: oracle input); oracle (the trace's).
   */
  readonly rates?: 'online' | 'prior' | 'oracle';
  /**
   * boa's prior rates (jobs/hour per class; the service's `priorRates`) when they come from elsewhere
   * than the trace, say other days' traces (`compare --prior-from`): the online estimator starts there.
   */
  readonly priorRatesPerHour?: Readonly<Record<string, number>>;
  /**
   * Submissions boa's online estimator holds before the trace's first arrival, `secondsBefore` it: a
   * service that ran through other days has them in its window (`compare --history`). Their jobs are
   * not run; the cluster and the budget's ledger start empty.
   */
  readonly history?: ReadonlyArray<{ readonly app: string; readonly secondsBefore: number }>;
  /** boa's warm-up (core/warmup.ts): hours from half the budget to all of it; 0 or absent: none. */
  readonly warmupHours?: number;
  /** boa's drain (core/exec/drain-widths.ts): hours without an arrival before it; 0: never; absent: 2. */
  readonly drainAfterHours?: number;
  /** boa's fill below the band (core/exec/band-fill.ts): the band, a share of the budget; 0 or absent: never. */
  readonly fillBelowBand?: number;
  /** boa's queue for the budget (core/ceiling-widths.ts waitingOrder); absent: least-work-left, the service's default. */
  readonly queueOrder?: string;
  /** boa's bound on a wait: hours after its submission a waiting job goes first; absent: 24. */
  readonly queueOverdueHours?: number;
  /** boa's plan cap (core/plan-cap.ts): the most budget a plan gets, times its load's minimum; 0 or absent: none. */
  readonly planCapMultiple?: number;
  /** boa's credit for a tight budget (core/credit.ts): hours to spend the window's credit over; 0: never; absent: 4. */
  readonly creditSpendHours?: number;
  /** boa's confidence bound z: the load planned at 1 + z / sqrt(arrivals seen) times its online estimate; 0: none. */
  readonly rateConfidence?: number;
  /** boa's rise detection (src/service/rate-rise.ts) over this many hours; 0: none; absent: the service's 2. */
  readonly rateRiseHours?: number;
  /** boa's first-day arrivals (src/service/estimators.ts): every class planned with this many more until the window is full; 0: none. */
  readonly firstDayArrivals?: number;
  /**
   * boa's demand ratio (core/demand-ratio.ts; the service's opt-in `demandHalfLifeHours`): its
   * half-life in hours; 0 or absent: none, as the service's default.
   */
  readonly demandHalfLifeHours?: number;
  /**
   * boa's spend ceiling look-ahead (core/spend-ceiling.ts; the service's `budgetLookaheadHours`): hours
   * of window ends it keeps within the budget, from the horizon (1: the ceiling before 2026-11-29) to
   * below the window; absent: 3.
   */
  readonly ceilingLookaheadHours?: number;
  /** boa's plan at a price at least the ceiling's highest clearing price, decayed with this half-life in hours (simulator only, `boa@clearH`); absent: none. */
  readonly clearHalfLifeHours?: number;
  /**
   * boa's idle fill (core/exec/idle-fill.ts) by time saved: a job widens onto idle GPUs of its own nodes
   * (on several nodes too) where that saves at least this many restarts (simulator only, `boa@fillK`);
   * absent: the 1.1x gain rule, one-node jobs only, until the quiet fill below.
   */
  readonly fillSavedRestarts?: number;
  /** The same once no job has arrived for the drain's hours (`boa@fillqK`); default 20, 0: none. */
  readonly quietFillSavedRestarts?: number;
  /**
   * Pollux variants (compare --sensitivity, `pollux-*@interference`): AdaptDL's exploration cap, utility
   * window, boot freeze, and Pollux's at most one distributed job per node.
   */
  readonly explorationCap?: boolean;
  readonly utilityWindowTicks?: number;
  readonly bootFreeze?: boolean;
  readonly interferenceAvoidance?: boolean;
  /** pollux-budget's controller gain, logit(c) per hour at a spend error of one budget (`@gainG`). */
  readonly polluxBudgetGainPerHour?: number;
}

export interface Policy {
  readonly name: string;
  onArrival?(job: JobView, now: number): void;
  onCompletion?(job: JobView, now: number): void;
  /** Called every scheduling tick with the active (arrived, unfinished) jobs. */
  decide(cluster: ClusterView, jobs: readonly JobView[]): Decision;
}

export interface PolicyDefinition {
  readonly name: string;
  readonly mode: 'fixed' | 'autoscaled';
  /**
   * The knob a comparison sweeps: budget (GPU-hours/hour or cluster GPUs), target efficiency, or price
   * (seconds of JCT one GPU-second must save).
   */
  readonly knob: 'budget' | 'target' | 'price';
  readonly describe: string;
  create(context: PolicyContext, options: PolicyOptions): Policy;
}

/**
 * A policy refuses options it cannot run with (say, a fixed cluster without a size) by throwing an error
 * named `<Policy>OptionsError`. The commands treat those as bad input (one line, exit code 2; a skipped
 * point in a comparison), and errors cross worker threads by name, hence a naming rule, not a class.
 */
export function isPolicyOptionsError(errorName: string): boolean {
  return /^[A-Z][A-Za-z]*OptionsError$/.test(errorName);
}
