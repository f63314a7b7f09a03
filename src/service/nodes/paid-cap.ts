import { isBilled } from '../paid-now.ts';
import type { PoolNode } from '../ports.ts';

/**
 * A paid node in units of the cap (the group's nodes): its GPUs over the group's GPUs per node. A
 * replaced group's node is of another type as a rule (an instance-type change): counted as one, four
 * 4-GPU nodes beside a cap of 16 1-GPU nodes left room for 12 more, 28 GPUs paid against 16 (found in an
 * operator review). Without `gpusPerNode`, one.
 */
export function capUnits(node: PoolNode, gpusPerNode: number | undefined): number {
  return gpusPerNode ? node.gpus / gpusPerNode : 1;
}

/** Whole nodes within `room` cap units (a hair of tolerance, as the ceiling's own count). */
const wholeNodes = (room: number) => Math.floor(room + 1e-9);

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
  gpusPerNode?: number,
): number {
  if (paidCap === undefined) return Number.POSITIVE_INFINITY;
  let leavingPaid = 0;
  for (const node of nodes)
    if (isBilled(node) && (node.leaving || removing.terminated(node.id)))
      leavingPaid += capUnits(node, gpusPerNode);
  return Math.max(floor, wholeNodes(paidCap - leavingPaid));
}

/**
 * The most nodes boa keeps for `target` so that a replaced group's nodes (paid until CloudFormation
 * deletes that group, minutes and more: replaced-nodegroups.ts) and its own stay within `paidCap`: a
 * ceiling that falls meanwhile removes nodes of the new group, since boa leaves the old ones to the
 * group's deletion. Nodes leaving otherwise (a terminate draining) only hold raises back (above).
 */
export function keptWithinPaidCap(
  nodes: readonly PoolNode[],
  target: number,
  paidCap: number | undefined,
  gpusPerNode?: number,
) {
  if (paidCap === undefined) return target;
  let replacedPaid = 0;
  // The group's own nodes of more GPUs than configured (its type is not BOA_INSTANCE_TYPE's: the pool
  // refuses raises, instance-type-check.ts) count as that many of the cap's: counted as one, a 4-GPU
  // node kept at a cap of one 1-GPU node paid 4 times the budget's GPUs for good, the ledger's debt
  // never repaid (found with the emulated group). The largest counts for all: boa picks the victims.
  let ownUnit = 1;
  for (const node of nodes) {
    if (node.replacedGroup !== undefined) {
      if (isBilled(node)) replacedPaid += capUnits(node, gpusPerNode);
    } else if (!node.leaving) ownUnit = Math.max(ownUnit, capUnits(node, gpusPerNode));
  }
  if (replacedPaid === 0 && ownUnit === 1) return target;
  return Math.min(target, Math.max(0, wholeNodes((paidCap - replacedPaid) / ownUnit)));
}
