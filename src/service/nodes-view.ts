/**
 * GET /v1/nodes and `boa nodes`: each node of boa's last listing, in the words GET /v1/status counts
 * them by (status-view.ts nodeGroupTruth), with the jobs holding its GPUs and since when it is paid.
 */
import { nodesOf } from './jobs.ts';
import type { PoolNode } from './ports.ts';
import type { BoaService } from './service.ts';
import { stoppingHolds } from './stopping-gpus.ts';

/** Allocations and replicas name a node by its Kubernetes name once it has one, else its id. */
const allocationName = (node: PoolNode) => node.name ?? node.id;

/**
 * A node's state, as status counts it: boa removing it (listed until it is gone), ready, or why not
 * (booting, registering, not-ready, no-gpus, cordoned, leaving).
 */
function stateOf(node: PoolNode, removes: ((id: string) => boolean) | undefined): string {
  if (removes?.(node.id)) return 'removing';
  return node.ready ? 'ready' : (node.waitingFor ?? 'booting');
}

/** Per node name, the GPUs each running job holds there (idle-fill GPUs included: they run there). */
function jobsByNode(service: BoaService) {
  const out = new Map<string, Array<{ id: number; name: string | null; gpus: number }>>();
  for (const job of service.state.jobs.values()) {
    for (const { node, gpus } of nodesOf(job.allocation)) {
      const list = out.get(node) ?? [];
      list.push({ id: job.id, name: job.name, gpus });
      out.set(node, list);
    }
  }
  return out;
}

/**
 * Per node name, the GPUs replicas boa stops still hold, by job, as placement counts them
 * (stopping-gpus.ts stoppingHolds): stops no executor answer has listed yet included, so a node shows
 * free only the GPUs placement can give.
 */
function stoppingByNode(service: BoaService) {
  const { state, deps, execution } = service;
  const out = new Map<string, Map<number, { replicas: number; gpus: number }>>();
  const holds = stoppingHolds(
    state.liveReplicas,
    execution.orderedStops,
    state.jobs,
    deps.config.gpusPerNode,
  );
  for (const { jobId, node, gpus } of holds) {
    const byJob = out.get(node) ?? new Map<number, { replicas: number; gpus: number }>();
    const entry = byJob.get(jobId) ?? { replicas: 0, gpus: 0 };
    entry.replicas += 1;
    entry.gpus += gpus;
    byJob.set(jobId, entry);
    out.set(node, byJob);
  }
  return out;
}

const iso = (ms: number) => new Date(ms).toISOString();

export function nodesView(service: BoaService) {
  const { state, deps } = service;
  const lastTickAt = state.lastTickAt === undefined ? null : iso(state.lastTickAt);
  // Before the pool answers a listing after a start, `nodes` is boot's empty list, not the nodes up.
  if (!state.nodesListed) return { nodes: null, lastTickAt };
  const status = state.nodeStatus?.();
  const removals = new Map((status?.removing ?? []).map((r) => [r.nodeId, r]));
  const paidSince = deps.repo.ledger.openNodesPaidSince();
  const jobs = jobsByNode(service);
  const stopping = stoppingByNode(service);
  const nodes = state.nodes.map((node) => {
    const name = allocationName(node);
    const removal = removals.get(node.id);
    const paid = paidSince.get(node.id);
    return {
      id: node.id,
      name: node.name ?? null,
      state: stateOf(node, status?.removes),
      removing: removal ? { reason: removal.reason, state: removal.state, since: removal.since } : null,
      replacedGroup: node.replacedGroup ?? null,
      gpus: node.gpus,
      foreignGpus: node.foreignGpus ?? 0,
      jobs: (jobs.get(name) ?? []).sort((a, b) => a.id - b.id),
      stopping: [...(stopping.get(name) ?? [])]
        .map(([jobId, s]) => ({ jobId, replicas: s.replicas, gpus: s.gpus }))
        .sort((a, b) => a.jobId - b.jobId),
      launchedAt: iso(node.launchedAt),
      // The ledger's open row (billed nodes only: EC2 bills from running): paid from there until gone.
      paidSince: paid === undefined ? null : iso(paid),
    };
  });
  return { nodes, lastTickAt };
}
