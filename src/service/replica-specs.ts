import { nodesOf, type ServiceJob } from './jobs.ts';
import type { Executor, ReplicaSpec } from './ports.ts';

/**
 * The replicas a running job's generation should have, one per node it holds, each with torchrun's
 * launch environment and boa's (BOA_URL, the job's token, its generation, where its checkpoint is).
 */
export function replicaSpecs(
  job: ServiceJob,
  token: string,
  boaUrl: string,
  executor: Pick<Executor, 'rendezvous'> | undefined,
): ReplicaSpec[] {
  const workload = job.workload;
  if (!workload) return [];
  const nodes = nodesOf(job.allocation);
  const rank0 = nodes[0]?.node ?? '';
  const master = executor?.rendezvous?.(job.id, job.generation, rank0) ?? { addr: rank0, port: 29500 };
  const common: Record<string, string> = {
    BOA_URL: boaUrl,
    BOA_JOB_ID: String(job.id),
    BOA_JOB_TOKEN: token,
    BOA_GENERATION: String(job.generation),
    WORLD_SIZE: String(job.allocation.length),
    NNODES: String(nodes.length),
    MASTER_ADDR: master.addr,
    MASTER_PORT: String(master.port),
  };
  if (workload.checkpoint?.uri) common.BOA_CHECKPOINT_DIR = workload.checkpoint.uri;
  else if (workload.checkpoint?.volumeClaim) common.BOA_CHECKPOINT_DIR = '/checkpoint';
  // Nodes can hold different numbers of the job's GPUs (3 + 1), so NODE_RANK * NPROC_PER_NODE is not
  // the global rank of a node's first worker: BOA_FIRST_RANK is, for launchers that start workers.
  let firstRank = 0;
  return nodes.map(({ node, gpus }, rank) => {
    const env = {
      ...common,
      NODE_RANK: String(rank),
      NPROC_PER_NODE: String(gpus),
      BOA_FIRST_RANK: String(firstRank),
    };
    firstRank += gpus;
    return { jobId: job.id, generation: job.generation, rank, node, gpus, workload, env };
  });
}
