import type { ServiceJob } from './jobs.ts';
import type { ReplicaStatus } from './ports.ts';

/**
 * A job's replicas boa is stopping, or is about to (cancelled, rescaled, moved): they may run on through
 * their grace (terminationGraceSeconds) before SIGKILL, holding their GPUs meanwhile.
 */
export interface StoppingReplicas {
  readonly replicas: number;
  /** The GPUs they hold (what boa gave each; a node's gpusPerNode for one given before a restart of boa). */
  readonly gpus: number;
  /** When the last of them is SIGKILLed at the latest (epoch ms); null until the executor says (not yet stopped). */
  readonly killAt: number | null;
}

/** The key a replica's GPUs are remembered by. */
export const replicaKey = (r: { jobId: number; generation: number; rank: number }) =>
  `${r.jobId}/${r.generation}/${r.rank}`;

/** A replica the executor last reported not ended, with the GPUs boa gave it when known here. */
export type LiveReplica = ReplicaStatus & { readonly gpus?: number };

/** Not of its job's running generation: boa is stopping it, or stops it at the executor's next pass. */
export function isStopping(replica: LiveReplica, jobs: ReadonlyMap<number, ServiceJob>): boolean {
  const job = jobs.get(replica.jobId);
  return !(job?.state === 'running' && job.generation === replica.generation);
}

/**
 * Per job, its replicas not ended that are not of its running generation: the executor is stopping them,
 * or stops them at its next pass (a job cancelled since its last report). Read when asked, from the jobs
 * as they are now: a view built at the executor's pass missed a job cancelled after it.
 */
export function stoppingReplicasOf(
  live: readonly LiveReplica[],
  jobs: ReadonlyMap<number, ServiceJob>,
  gpusPerNode: number,
): Map<number, StoppingReplicas> {
  const out = new Map<number, { replicas: number; gpus: number; killAt: number | null; unknown: boolean }>();
  for (const replica of live) {
    if (!isStopping(replica, jobs)) continue;
    const entry = out.get(replica.jobId) ?? { replicas: 0, gpus: 0, killAt: null, unknown: false };
    entry.replicas += 1;
    entry.gpus += replica.gpus ?? gpusPerNode;
    if (replica.killAt === undefined) entry.unknown = true;
    else entry.killAt = Math.max(entry.killAt ?? 0, replica.killAt);
    out.set(replica.jobId, entry);
  }
  const result = new Map<number, StoppingReplicas>();
  // One not stopped yet has its whole grace ahead: no time is said until every one has one.
  for (const [id, e] of out)
    result.set(id, { replicas: e.replicas, gpus: e.gpus, killAt: e.unknown ? null : e.killAt });
  return result;
}

/** The job view's `stopping`: the replicas, their GPUs, and when SIGKILL comes at the latest (ISO). */
export function stoppingView(stopping: StoppingReplicas | undefined) {
  if (!stopping) return null;
  return {
    replicas: stopping.replicas,
    gpus: stopping.gpus,
    killAt: stopping.killAt === null ? null : new Date(stopping.killAt).toISOString(),
  };
}
