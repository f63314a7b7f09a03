import { type LiveReplica, type StoppingReplicas, stoppingReplicasOf } from './stopping-replicas.ts';
import type { ServiceJob } from './jobs.ts';
import type { MixedPlan } from '../core/plan.ts';
import type { NodeGroupState, PoolNode } from './ports.ts';

/** Why a waiting job waits, as the job view says it. */
export type WaitingFor = 'plan' | 'budget' | 'tick' | 'nodes' | 'gpus' | 'stopping';

/** What the service knows that tells one wait from another, read once for a whole list of jobs. */
export interface WaitContext {
  /** The last tick's start: a job submitted since has not been placed by any tick yet. */
  readonly lastTickAt: number | undefined;
  /**
   * Nodes are on their way: one listed is still booting or registering, one asked for is not listed yet,
   * or the group is changing (nodes leaving, whose room a raise waits for; an update of boa's own).
   */
  readonly nodesComing: boolean;
  /**
   * Classes the plan in force gives widths: a job of one waits for the next tick to take them, not for
   * a plan (between a budget set and that tick it said "is a budget set?": a newcomer's review).
   */
  readonly plannedClasses: ReadonlySet<string>;
  /** Jobs whose replicas still run while boa stops them (stopping-replicas.ts, of ServiceState.liveReplicas). */
  readonly stopping?: ReadonlyMap<number, StoppingReplicas>;
  /**
   * Jobs the last tick left waiting for GPUs stopping replicas still hold, each with the jobs holding
   * them where it would fit (ServiceState.heldByStopping).
   */
  readonly heldByStopping?: ReadonlyMap<number, readonly number[]>;
}

export function waitContext(
  state: {
    readonly lastTickAt: number | undefined;
    readonly nodes: readonly PoolNode[];
    readonly group: NodeGroupState | undefined;
    readonly plan?: { readonly plan: MixedPlan } | undefined;
    /** With `jobs`: the replicas boa stops that still run are told (absent: none are). */
    readonly liveReplicas?: readonly LiveReplica[];
    readonly jobs?: ReadonlyMap<number, ServiceJob>;
    readonly heldByStopping?: ReadonlyMap<number, readonly number[]>;
  },
  gpusPerNode = 0,
): WaitContext {
  let staying = 0;
  let changing = state.group?.updateInFlight !== undefined;
  for (const node of state.nodes) {
    if (node.leaving) changing = true;
    else staying++;
    // A node cordoned by hand is not coming; one not ready yet (booting, registering, a brief not-ready) is.
    if (!node.leaving && !node.ready && !node.cordoned && node.waitingFor !== 'cordoned') changing = true;
  }
  const plan = state.plan?.plan ?? {};
  return {
    lastTickAt: state.lastTickAt,
    nodesComing: changing || (state.group?.desiredSize ?? 0) > staying,
    plannedClasses: new Set(Object.keys(plan).filter((name) => (plan[name]?.length ?? 0) > 0)),
    stopping:
      state.liveReplicas && state.jobs
        ? stoppingReplicasOf(state.liveReplicas, state.jobs, gpusPerNode)
        : new Map(),
    heldByStopping: state.heldByStopping,
  };
}

/**
 * Why a waiting job waits: no plan yet, the budget (queued: queueOrder), the next tick (submitted since
 * the last one: no tick has placed it yet, idle nodes or not), GPUs replicas boa stops still hold (the
 * jobs and when SIGKILL comes: heldByView), nodes to boot, or, with none coming, GPUs
 * the running jobs hold (the group at its maximum, or nodes too full to place it): "waits for nodes"
 * there read as if more were on their way (an operator trial, the group at its maximum, all ready).
 */
export function waitingFor(job: ServiceJob, context: WaitContext): WaitingFor | null {
  if (job.state !== 'waiting') return null;
  if (!job.widths) return context.plannedClasses.has(job.className) ? 'tick' : 'plan';
  if (job.queuedForBudget) return 'budget';
  // Only as of the last tick: one submitted since was not placed yet.
  if (
    context.heldByStopping?.has(job.id) &&
    context.lastTickAt !== undefined &&
    job.submittedAt <= context.lastTickAt
  )
    return 'stopping';
  if (context.lastTickAt === undefined || job.submittedAt > context.lastTickAt) return 'tick';
  return context.nodesComing ? 'nodes' : 'gpus';
}

/**
 * A job waiting for GPUs stopping replicas hold: whose replicas (the jobs holding GPUs on the nodes it
 * would fit, its own older generation's included, as the last tick found them) and when the last of
 * them is SIGKILLed at the latest (null: one is not stopped yet, its whole grace ahead, or the executor
 * has not answered since boa stopped it). Null for any other job.
 */
export function heldByView(job: ServiceJob, context: WaitContext) {
  const jobs = context.heldByStopping?.get(job.id);
  if (waitingFor(job, context) !== 'stopping' || jobs === undefined || jobs.length === 0) return null;
  let killAt: number | null = 0;
  for (const id of jobs) {
    const s = context.stopping?.get(id);
    killAt = killAt === null || !s || s.killAt === null ? null : Math.max(killAt, s.killAt);
  }
  return { jobs: [...jobs], killAt: killAt === null ? null : new Date(killAt).toISOString() };
}
