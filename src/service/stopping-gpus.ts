import { nodesOf, type ServiceJob } from './jobs.ts';
import type { OrderedStops } from './ordered-stops.ts';
import { isStopping, type LiveReplica, replicaKey } from './stopping-replicas.ts';

const NONE: ReadonlyMap<string, number> = new Map();
const NO_HOLDERS: ReadonlyMap<string, readonly number[]> = new Map();

/**
 * How long past its SIGKILL time a replica may still be reported before its stop counts as overdue: the
 * kill and the executor's next answers (every second while replicas stop) take a few seconds; a pod
 * stuck Terminating takes for ever, and no job waits for it rather than running short (placement.ts).
 */
export const STOP_OVERDUE_MS = 30_000;

/**
 * The GPUs replicas boa stops still hold, per node (by the name allocations use): placement gives them
 * to no one until the executor reports those replicas ended (placement-node-table.ts). Built once a tick
 * (the scheduler asks again only for another `live`, `now` or ordered stop), in one walk over the live
 * replicas and the stops no answer has told yet (ordered-stops.ts).
 */
export class StoppingGpus {
  private live: readonly LiveReplica[] | undefined;
  private at = Number.NaN;
  private version = -1;
  private byNode: ReadonlyMap<string, number> = NONE;
  private overdueByNode: ReadonlyMap<string, number> = NONE;
  private holders: ReadonlyMap<string, readonly number[]> = new Map();

  /** `gpusPerNode` counts a replica whose GPUs boa does not know (given before a restart of boa). */
  perNode(
    live: readonly LiveReplica[],
    ordered: OrderedStops,
    jobs: ReadonlyMap<number, ServiceJob>,
    gpusPerNode: number,
    now: number,
  ): ReadonlyMap<string, number> {
    if (live === this.live && now === this.at && ordered.version === this.version) return this.byNode;
    this.live = live;
    this.at = now;
    this.version = ordered.version;
    let byNode: Map<string, number> | undefined;
    const holders = new Map<string, number[]>();
    let overdue: Map<string, number> | undefined;
    for (const { jobId, node, gpus, killAt } of stoppingHolds(live, ordered, jobs, gpusPerNode)) {
      byNode ??= new Map();
      byNode.set(node, (byNode.get(node) ?? 0) + gpus);
      const on = holders.get(node);
      if (on === undefined) holders.set(node, [jobId]);
      else if (!on.includes(jobId)) on.push(jobId);
      if (killAt === undefined || now <= killAt + STOP_OVERDUE_MS) continue;
      overdue ??= new Map();
      overdue.set(node, (overdue.get(node) ?? 0) + gpus);
    }
    this.byNode = byNode ?? NONE;
    this.overdueByNode = overdue ?? NONE;
    this.holders = holders;
    return this.byNode;
  }

  /**
   * Of the last perNode's GPUs, those of replicas still reported past their SIGKILL time (STOP_OVERDUE_MS),
   * per node: held as the others are, but no job waits for them rather than running short.
   */
  get overdue(): ReadonlyMap<string, number> {
    return this.overdueByNode;
  }

  /**
   * Per job placement left waiting for stopping replicas' GPUs (with the nodes it waits on), the jobs
   * holding GPUs there (the view's heldBy), ascending: those of the last perNode, and `leaving`, the jobs
   * whose moves the same pass left GPUs held per node (placement.ts heldByLeaving), which perNode, built
   * before the pass, could not know: without them a job waiting for them named no holder for a tick.
   */
  heldBy(
    waiting: ReadonlyMap<number, readonly string[]>,
    leaving: ReadonlyMap<string, readonly number[]> = NO_HOLDERS,
  ): Map<number, readonly number[]> {
    const out = new Map<number, readonly number[]>();
    for (const [id, nodes] of waiting) {
      const jobs = new Set<number>();
      for (const node of nodes) {
        for (const holder of this.holders.get(node) ?? []) jobs.add(holder);
        for (const holder of leaving.get(node) ?? []) jobs.add(holder);
      }
      out.set(
        id,
        [...jobs].sort((a, b) => a - b),
      );
    }
    return out;
  }
}

/** A replica boa stops, on one node, whose GPUs go to no other job until the executor says it ended. */
export interface StoppingHold {
  readonly jobId: number;
  readonly node: string;
  readonly gpus: number;
  /** When the executor SIGKILLs the replica if it still runs; undefined for a stop not answered yet. */
  readonly killAt?: number;
}

/**
 * Every replica boa stops that holds GPUs from other jobs (OwnGpus): those the executor lists stopping,
 * and one per node of each stop no answer has told yet (ordered-stops.ts), as the generation had them. A
 * generation the executor lists is held by its live replicas, not twice. Placement
 * (StoppingGpus.perNode) and GET /v1/nodes (nodes-view.ts) both count these, so the GPUs a node shows
 * free are those placement can give.
 */
export function* stoppingHolds(
  live: readonly LiveReplica[],
  ordered: OrderedStops,
  jobs: ReadonlyMap<number, ServiceJob>,
  gpusPerNode: number,
): Generator<StoppingHold> {
  const reported = new Set<string>();
  const own = new OwnGpus(jobs);
  for (const replica of live) {
    if (!isStopping(replica, jobs)) continue;
    reported.add(`${replica.jobId}/${replica.generation}`);
    const gpus = own.heldFromOthers(replica.jobId, replica.node, replica.gpus ?? gpusPerNode);
    if (gpus > 0) yield { jobId: replica.jobId, node: replica.node, gpus, killAt: replica.killAt };
  }
  if (ordered.size === 0) return;
  for (const stop of ordered.pending(jobs)) {
    if (reported.has(`${stop.jobId}/${stop.generation}`)) continue;
    for (const { node, gpus } of nodesOf(stop.allocation)) {
      const held = own.heldFromOthers(stop.jobId, node, gpus);
      if (held > 0) yield { jobId: stop.jobId, node, gpus: held };
    }
  }
}

/**
 * Of the GPUs a stopping replica holds on a node, those held from other jobs. A running job's own older
 * replicas on a node it runs on now keep from others only what they hold beyond the GPUs its running
 * generation has there: its new replicas wait for them anyway, and counted against the job they made its
 * own nodes look full at its next placement, which moved it again, a generation a tick
 * (test/service/local-node-gone-restart.test.ts), and kept the idle fill from lending it that node's GPUs
 * (a restart more: kubernetes-crash.test.ts). The GPUs a job narrowed in place gives up are held, though:
 * another job placed on them would be booked running while the executor held it back
 * (test/service/narrowed-in-place-gpus.test.ts).
 */
class OwnGpus {
  /** Per job and node, the GPUs of its running generation there not yet set against its older replicas. */
  private readonly left = new Map<string, number>();

  constructor(private readonly jobs: ReadonlyMap<number, ServiceJob>) {}

  heldFromOthers(jobId: number, node: string, gpus: number): number {
    const job = this.jobs.get(jobId);
    if (job?.state !== 'running' || !job.allocation.includes(node)) return gpus;
    const key = `${jobId}/${node}`;
    const left = this.left.get(key) ?? job.allocation.filter((n) => n === node).length;
    this.left.set(key, Math.max(0, left - gpus));
    return Math.max(0, gpus - left);
  }
}

/**
 * Whether a replica boa was stopping in `before` is gone from `after`: its GPUs are free, and a job
 * placement left waiting for them can start now rather than at the next tick (up to tickSeconds later).
 */
export function stoppingEnded(
  before: readonly LiveReplica[],
  after: readonly LiveReplica[],
  jobs: ReadonlyMap<number, ServiceJob>,
): boolean {
  if (before.length === 0) return false;
  const still = new Set(after.map(replicaKey));
  return before.some((replica) => !still.has(replicaKey(replica)) && isStopping(replica, jobs));
}
