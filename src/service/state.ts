import type { MixedPlan } from '../core/plan.ts';
import type { IntervalPlan } from './demand.ts';
import type { ClassProfile } from '../core/profile.ts';
import type { PlanRow } from '../store/repository.ts';
import type { ServiceJob } from './jobs.ts';
import type { NodeStatusView } from './nodes/reconciler.ts';
import type { NodeGroupState, PoolNode } from './ports.ts';
import { OpsCounters } from './ops-counters.ts';
import type { LiveReplica } from './stopping-replicas.ts';
import { UnlistedPaid } from './unlisted-paid.ts';
import type { WorkSample } from './work-samples.ts';

export interface ClassState {
  profile: ClassProfile;
  priorRatePerHour: number;
  /** Observed 1-GPU work per statistical epoch (most recent last), from jobs that ran it cleanly. */
  workSamples: WorkSample[][];
}

export interface BudgetSetting {
  gpuHoursPerHour: number;
  /** When this value was set. */
  setAt: number;
  /**
   * Since when a budget has been set without a break: the window the spend ceiling holds starts there
   * (or at the service's start), and a changed value does not start it again (it would forgive debt).
   */
  promisedSince?: number;
  /**
   * The most GPUs the node group could run when it was set (unknown before its first listing): the
   * value counts at most that in what a window was promised (budget.ts promisedValues).
   */
  maxGpus?: number;
  /** The values before this one that were in force within a window ago, oldest first. */
  earlier?: ReadonlyArray<{
    readonly gpuHoursPerHour: number;
    readonly setAt: number;
    readonly maxGpus?: number;
  }>;
}

/** The service's working state in memory; every change is written through to the store. */
export class ServiceState {
  readonly jobs = new Map<number, ServiceJob>();
  readonly classes = new Map<string, ClassState>();
  budget: BudgetSetting | undefined;
  plan: { row: PlanRow; plan: MixedPlan } | undefined;
  /** Each class's last job draw (core/shares.ts nextDraw), read from the store on first use. */
  readonly lastDraws = new Map<string, number>();
  startedAt = 0;
  /**
   * When this start found the instance type changed since the last one; undefined when it did not. An
   * epoch begun before it ran partly on the old type's GPUs: it takes no sample (progress.ts).
   */
  instanceTypeSince: number | undefined = undefined;
  /**
   * Where the ledger is whole from: startedAt, or where it was last pruned to (retention.ts). Windows
   * start no earlier: a window made longer since the prune would read the pruned hours as unpaid.
   */
  ledgerSince = 0;
  /** Where the rate estimator's observation starts: startedAt, or an imported history's span (history.ts). */
  ratesObservedSince = 0;
  /** Changes with every history import or deletion: estimates cached before it are stale. */
  historyKey = '';
  /** The latest submission, finished jobs' too (the drain starts some hours after it). */
  lastSubmittedAt: number | undefined;
  /** The last tick handed the running jobs the budget's GPUs (src/service/drain.ts). */
  draining = false;
  /** The same, because the budget window was under its band (the opt-in fill, core/exec/band-fill.ts). */
  fillingToBudget = false;
  lastTickAt: number | undefined;
  /**
   * Bumped as each tick lists the pool: a listing asked for between ticks (after a raise) is taken only
   * if no tick's began since, so an older listing never replaces a newer one (found in review).
   */
  nodesListing = 0;
  /** When the tick now running began; undefined between ticks (a tick that never ends is a hung loop). */
  tickStartedAt: number | undefined;
  readonly counters = new OpsCounters();
  nodes: PoolNode[] = [];
  /**
   * The pool has answered a listing since this process started. Until then `nodes` is the empty list
   * boot left, not the nodes running: boa decides nothing about jobs or nodes (scheduler.ts), sends no
   * Heartbeat, and reads paid from the ledger (paid-now.ts).
   */
  nodesListed = false;
  /** The replicas the executor last reported not ended (execution.ts): those boa stops are shown stopping. */
  liveReplicas: readonly LiveReplica[] = [];
  /**
   * Jobs the last tick left waiting for GPUs stopping replicas still hold (placement.ts heldByStopping),
   * each with the jobs whose replicas hold them on the nodes it would fit.
   */
  heldByStopping: ReadonlyMap<number, readonly number[]> = new Map();
  /** The node group as the cloud last reported it (refreshed after boa's own changes). */
  group: NodeGroupState | undefined;
  /** What the group may pay for beyond the last listing while listings fail (the spend ceiling counts it). */
  readonly unlisted = new UnlistedPaid();
  /** The node reconciler's report for /v1/status (src/service/nodes). */
  nodeStatus: (() => NodeStatusView) | undefined;
  /** Allocated GPUs since `allocatedFrom`, for the ledger's allocation samples. */
  allocatedGpus = 0;
  /** The same GPUs by job class (gpu-time.ts bookedByClass): the samples' split of the budget. */
  allocatedByClass: Record<string, number> = {};
  allocatedFrom = 0;
  /** What the plan in force expects of the same interval (demand.ts); undefined without a plan. */
  intervalPlan: IntervalPlan | undefined;
  lastTickMs = 0;
  /** The budget the current load would need (service.loadNeeds), cached for a minute per load key. */
  loadNeeds: { at: number; key: string; gpuHoursPerHour: number } | undefined;
  /** The load needs being computed in the worker (load-needs.ts), and when a failed one is tried again. */
  loadNeedsComputing: Promise<void> | undefined;
  loadNeedsRetryAt: number | undefined;
  /** Counts class puts and deletes: a replaced profile or prior moves the load without moving the class count. */
  classesChanged = 0;
}

export const MAX_WORK_SAMPLES = 50;
