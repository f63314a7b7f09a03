import { isBilled } from '../paid-now.ts';
import type { PoolNode } from '../ports.ts';

/**
 * The most nodes a pass may ask the group for so that the nodes paid for stay within `paidCap`: the
 * ones kept plus the ones still paid on their way out (terminated by boa, or leaving on their own).
 * Without it, a budget cut reversed within seconds paid for the cut's nodes, still shutting down, and
 * their replacements together: 84 GPUs against a ceiling of 44 (an operator's trial). Holds back raises
 * only: never below `floor` (the nodes that exist, and the desired size the group has: a launch EC2
 * does not list yet), so it sends no scale-in and the group never picks which node dies.
 */
export function raiseWithinPaidCap(
  nodes: readonly PoolNode[],
  floor: number,
  paidCap: number | undefined,
  removing: { terminated(nodeId: string): boolean },
): number {
  if (paidCap === undefined) return Number.POSITIVE_INFINITY;
  let leavingPaid = 0;
  for (const node of nodes)
    if (isBilled(node) && (node.leaving || removing.terminated(node.id))) leavingPaid++;
  return Math.max(floor, paidCap - leavingPaid);
}

/**
 * The most nodes boa keeps for `target` so that a replaced group's nodes (paid until CloudFormation
 * deletes that group, minutes and more: replaced-nodegroups.ts) and its own stay within `paidCap`: a
 * ceiling that falls meanwhile removes nodes of the new group, since boa leaves the old ones to the
 * group's deletion. Nodes leaving otherwise (a terminate draining) only hold raises back (above).
 */
export function keptWithinPaidCap(nodes: readonly PoolNode[], target: number, paidCap: number | undefined) {
  if (paidCap === undefined) return target;
  let replacedPaid = 0;
  for (const node of nodes) if (node.replacedGroup !== undefined && isBilled(node)) replacedPaid++;
  return replacedPaid === 0 ? target : Math.min(target, Math.max(0, paidCap - replacedPaid));
}
