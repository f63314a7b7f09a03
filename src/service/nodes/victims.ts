import type { PoolNode } from '../ports.ts';

/** The name a node has in jobs' allocations (its Kubernetes name on EKS, else its id). */
export function allocationName(node: PoolNode): string {
  return node.name ?? node.id;
}

/**
 * Which nodes to remove when there are `count` more than wanted, the way Cluster Autoscaler picks on a
 * managed node group: nodes that run nothing useful first (not ready: booting, never joined), then the
 * emptiest (fewest allocated GPUs, so an idle node goes before any busy one), then the newest (least
 * likely to hold a warm cache or a checkpoint-in-progress), then by id for a stable choice.
 */
export function chooseVictims(
  candidates: readonly PoolNode[],
  count: number,
  busyGpus: ReadonlyMap<string, number>,
): PoolNode[] {
  if (count <= 0) return [];
  const load = (n: PoolNode) => busyGpus.get(allocationName(n)) ?? 0;
  return [...candidates]
    .sort(
      (a, b) =>
        Number(a.ready) - Number(b.ready) ||
        load(a) - load(b) ||
        b.launchedAt - a.launchedAt ||
        a.id.localeCompare(b.id),
    )
    .slice(0, count);
}

/** GPUs allocated per node name, from the jobs' allocations (one entry per GPU). */
export function busyGpusByNode(allocations: Iterable<readonly string[]>): Map<string, number> {
  const busy = new Map<string, number>();
  for (const allocation of allocations)
    for (const name of allocation) busy.set(name, (busy.get(name) ?? 0) + 1);
  return busy;
}
