import type { ServiceJob } from './jobs.ts';
import { isStopping, type LiveReplica, replicaKey } from './stopping-replicas.ts';

const NONE: ReadonlyMap<string, number> = new Map();

/**
 * The GPUs replicas boa stops still hold, per node (by the name allocations use): placement gives them
 * to no one until the executor reports those replicas ended (placement-node-table.ts). Built once a tick
 * (the scheduler asks again only for another `live` or `now`), in one walk over the live replicas.
 */
export class StoppingGpus {
  private live: readonly LiveReplica[] | undefined;
  private at = Number.NaN;
  private byNode: ReadonlyMap<string, number> = NONE;

  /** `gpusPerNode` counts a replica whose GPUs boa does not know (given before a restart of boa). */
  perNode(
    live: readonly LiveReplica[],
    jobs: ReadonlyMap<number, ServiceJob>,
    gpusPerNode: number,
    now: number,
  ): ReadonlyMap<string, number> {
    if (live === this.live && now === this.at) return this.byNode;
    this.live = live;
    this.at = now;
    let byNode: Map<string, number> | undefined;
    for (const replica of live) {
      if (!isStopping(replica, jobs)) continue;
      // A running job's own older replica on a node it runs on now is not counted: its new replicas wait
      // for it anyway, and counted against the job it made the job's own nodes look full at its next
      // placement, which moved it again, a generation a tick (test/service/local-node-gone-restart.test.ts).
      const job = jobs.get(replica.jobId);
      if (job?.state === 'running' && job.allocation.includes(replica.node)) continue;
      byNode ??= new Map();
      byNode.set(replica.node, (byNode.get(replica.node) ?? 0) + (replica.gpus ?? gpusPerNode));
    }
    this.byNode = byNode ?? NONE;
    return this.byNode;
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
