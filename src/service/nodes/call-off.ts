import type { PoolNode } from '../ports.ts';
import { overCeilingOnOldNode } from './eks-update.ts';
import type { RemovalWalk } from './removals.ts';
import { allocationName, type GpusInUse } from './victims.ts';

/**
 * Level-triggered: while fewer nodes are kept than the target (`short`), scale-in removals not yet
 * terminating (and over-ceiling ones an EKS update left, but not on its old nodes: eks-update.ts) are
 * called off, the busiest node first (the least drained). Carried on, the node would drain while a new
 * one launched beside it for the target: the ceiling's nodes plus one paid for, and a cold boot for a
 * warm node (found in review). `short` is asked again before each: a tick during an uncordon may lower
 * the target, and a count taken once called off removals it wanted, choosing them again next tick.
 */
export async function callOffWhileShort(
  removing: RemovalWalk,
  nodes: readonly PoolNode[],
  busy: GpusInUse,
  short: () => number,
): Promise<void> {
  if (short() <= 0) return;
  const nodeOf = (nodeId: string) => nodes.find((n) => n.id === nodeId);
  const load = (nodeId: string) => {
    const node = nodeOf(nodeId);
    return node ? busy(allocationName(node)) : -1;
  };
  const callable = removing
    .rows()
    .filter(
      (r) =>
        r.reason !== 'provision-timeout' &&
        r.state !== 'terminating' &&
        load(r.nodeId) >= 0 &&
        !overCeilingOnOldNode(r, nodeOf(r.nodeId)),
    )
    .sort((a, b) => load(b.nodeId) - load(a.nodeId));
  for (const row of callable) {
    if (short() <= 0) break;
    await removing.cancel(row);
  }
}
