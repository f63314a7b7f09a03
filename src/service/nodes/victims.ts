import type { PoolNode } from '../ports.ts';

/** The name a node has in jobs' allocations (its Kubernetes name on EKS, else its id). */
export function allocationName(node: PoolNode): string {
  return node.name ?? node.id;
}

/** GPUs in use on a node, by the name allocations give it (jobs placed there, replicas still stopping). */
export type GpusInUse = (nodeName: string) => number;

/**
 * Which nodes to remove when there are `count` more than wanted, the way Cluster Autoscaler picks on a
 * managed node group: nodes that run nothing useful first (not ready and idle: booting, never joined),
 * then the emptiest (fewest allocated GPUs, so an idle node goes before any busy one), then the newest
 * (least likely to hold a warm cache or a checkpoint-in-progress), then by id for a stable choice. A node
 * not ready that still holds jobs (in its NotReady grace) ranks by its load like a ready one: removing
 * it would restart those jobs.
 */
export function chooseVictims(
  candidates: readonly PoolNode[],
  count: number,
  gpusInUse: GpusInUse,
): PoolNode[] {
  if (count <= 0) return [];
  // Each node's load read once, not at every comparison.
  const ranked = candidates.map((node) => ({ node, load: gpusInUse(allocationName(node)) }));
  const before = (a: Ranked, b: Ranked) =>
    Number(useful(a)) - Number(useful(b)) ||
    a.load - b.load ||
    b.node.launchedAt - a.node.launchedAt ||
    a.node.id.localeCompare(b.node.id);
  if (count > 8)
    return ranked
      .sort(before)
      .slice(0, count)
      .map(({ node }) => node);
  // A tick removes a node or two out of thousands: picking them one by one costs less than a sort.
  // The order is total (ids break ties), so the next pick is the first node after the last one.
  const chosen: PoolNode[] = [];
  let last: Ranked | undefined;
  while (chosen.length < count) {
    let best: Ranked | undefined;
    for (const r of ranked)
      if ((last === undefined || before(last, r) < 0) && (best === undefined || before(r, best) < 0))
        best = r;
    if (best === undefined) break;
    chosen.push(best.node);
    last = best;
  }
  return chosen;
}

/**
 * chooseVictims with GPUs held by pods boa did not create ranked as load: such a node goes after idle
 * ones, but is not exempt (found in review: kept while the pod lived, with the desired size 0, its node
 * was paid from boa's budget with no limit and the time-average went over it). When the count boa's
 * budget and plan allow asks for it, it is removed and EKS's drain evicts the pod: the budget wins.
 */
export function chooseVictimsForeignLast(
  candidates: readonly PoolNode[],
  count: number,
  gpusInUse: GpusInUse,
): PoolNode[] {
  // Asked every tick, most often for none: no pass over the nodes then (it was 7% of the decision).
  if (count <= 0) return [];
  const foreign = new Map<string, number>();
  for (const n of candidates) if (n.foreignGpus) foreign.set(allocationName(n), n.foreignGpus);
  if (foreign.size === 0) return chooseVictims(candidates, count, gpusInUse);
  return chooseVictims(candidates, count, (name) => gpusInUse(name) + (foreign.get(name) ?? 0));
}

interface Ranked {
  readonly node: PoolNode;
  readonly load: number;
}

/** Runs something, or can soon: ready, or holding jobs through a NotReady blip. */
function useful({ node, load }: Ranked): boolean {
  return node.ready || load > 0;
}
