import type { NodeRemovalRow } from '../../store/node-removals.ts';
import { isBilled } from '../paid-now.ts';
import { capUnits } from './paid-cap.ts';
import type { NodeGroupState, PoolNode } from '../ports.ts';
import { allocationName, type GpusInUse } from './victims.ts';

/**
 * The budget while EKS applies an update boa did not send (updatedByEks). EKS raises the Auto Scaling
 * group's maximum and desired size for new nodes, cordons the old ones, drains each (a pod disruption
 * budget can hold a node 15 minutes before the update fails) and has the group terminate it, repeating
 * until no node of the old launch template is left; then it lowers the maximum and desired size one at a
 * time back to their values before the update
 * (https://docs.aws.amazon.com/eks/latest/userguide/managed-node-update-behavior.html). Cluster
 * Autoscaler keeps scaling the group meanwhile (https://github.com/aws/containers-roadmap/issues/916),
 * removing a node by TerminateInstanceInAutoScalingGroup with the desired size lowered, as boa does
 * (kubernetes/autoscaler, cloudprovider/aws/auto_scaling_groups.go DeleteInstances). So boa holds off
 * while the nodes paid are within the spend ceiling, and past it removes the excess that way. The scale-down
 * phase only decrements, so it never takes the group back above what boa removed; boa sends no resize
 * until the group is ACTIVE (EKS refuses one meanwhile: ResourceInUseException).
 */

/**
 * How much more is paid than the budget allows now, in units of the cap (the configured node's GPUs,
 * paid-cap.ts capUnits): nodes not on their way out (pending ones included: billed within a minute) and a
 * replaced group's billed ones (paid until that group's deletion, which boa leaves to CloudFormation:
 * paid-cap.ts keptWithinPaidCap), each at its own GPUs, less the ceiling, never below the group's minimum
 * (its size at its largest node's share). The group's own nodes counted as one each read a 4-GPU surge
 * beside two 4-GPU nodes as 3 of a ceiling of 8 1-GPU nodes: 12 GPUs paid for 8 through the update
 * (found in review). 0 without a budget.
 */
export function paidBeyondCeiling(
  nodes: readonly PoolNode[],
  removing: { terminated(nodeId: string): boolean },
  paidCap: number | undefined,
  group: NodeGroupState,
  gpusPerNode?: number,
): number {
  if (paidCap === undefined) return 0;
  let paid = 0;
  let ownUnit = 0;
  for (const node of nodes) {
    const replaced = node.replacedGroup !== undefined;
    const counted = replaced ? isBilled(node) : !node.leaving;
    if (!counted || removing.terminated(node.id)) continue;
    const units = capUnits(node, gpusPerNode);
    paid += units;
    if (!replaced) ownUnit = Math.max(ownUnit, units);
  }
  const beyond = paid - Math.max(paidCap, group.minSize * (ownUnit || 1));
  // A hair of tolerance, as the ceiling's own count: 3 x (4/3) is not above 4.
  return beyond > 1e-9 ? beyond : 0;
}

/**
 * How much of what paidBeyondCeiling counts boa is removing already, in the same units. Not a node EKS
 * is terminating meanwhile (leaving): no longer counted as paid, its removal made no room (found in
 * review: counted, the excess fell short by one while it was listed).
 */
export function removingPaid(
  nodes: readonly PoolNode[],
  removing: { includes(nodeId: string): boolean; terminated(nodeId: string): boolean },
  gpusPerNode?: number,
): number {
  let units = 0;
  for (const node of nodes)
    if (!node.leaving && !removing.terminated(node.id) && removing.includes(node.id))
      units += capUnits(node, gpusPerNode);
  return units;
}

/**
 * The nodes to remove during an EKS update, least harm to it first. The nodes the update replaces come
 * first (an earlier launch template version, busy ones too: its drain stops their jobs anyway), so EKS
 * has fewer to drain; its new nodes last, as the update waits for them to be Ready and moves the old
 * nodes' pods there (found with the emulated group: removing the surge beside a busy old node left the
 * update nowhere to go); the nodes EKS tainted for the update count as replaced. Then idle before busy,
 * and the oldest launched (without a version to compare, the old template's: EKS switches the group to
 * the new one first). As many as cover `excess` in `unitsOf` (paidBeyondCeiling's units; one a node by
 * default).
 */
export function chooseUpdateVictims(
  candidates: readonly PoolNode[],
  excess: number,
  gpusInUse: GpusInUse,
  unitsOf: (node: PoolNode) => number = () => 1,
): PoolNode[] {
  if (excess <= 0) return [];
  const load = (node: PoolNode) => gpusInUse(allocationName(node)) + (node.foreignGpus ?? 0);
  const first = (flag: boolean | undefined) => (flag === true ? 0 : 1);
  const old = replacedByUpdate;
  return candidates
    .map((node) => ({ node, load: load(node) }))
    .sort(
      (a, b) =>
        first(old(a.node)) - first(old(b.node)) ||
        a.load - b.load ||
        first(a.node.keepOnly) - first(b.node.keepOnly) ||
        a.node.launchedAt - b.node.launchedAt ||
        a.node.id.localeCompare(b.node.id),
    )
    .map(({ node }) => node)
    .filter((node) => {
      if (excess <= 1e-9) return false;
      excess -= unitsOf(node);
      return true;
    });
}

/**
 * The over-ceiling removals that may be called off during an update, busiest node first (the least
 * drained): not terminating, their node listed and paid, and neither of the update's old version nor
 * marked by EKS for it (EKS drains those; uncordoning one would undo its cordon).
 */
export function spareOverCeiling(
  rows: readonly NodeRemovalRow[],
  nodes: readonly PoolNode[],
  gpusInUse: GpusInUse,
): Array<{ row: NodeRemovalRow; node: PoolNode; load: number }> {
  const byId = new Map<string, PoolNode>();
  for (const node of nodes) byId.set(node.id, node);
  return rows
    .flatMap((row) => {
      const node = byId.get(row.nodeId);
      const callable =
        row.reason === 'over-ceiling' &&
        row.state !== 'terminating' &&
        node !== undefined &&
        !node.leaving &&
        !replacedByUpdate(node);
      return callable ? [{ row, node, load: gpusInUse(allocationName(node)) }] : [];
    })
    .sort((a, b) => b.load - a.load);
}

/**
 * A node an EKS update replaces: of an earlier launch template version, or tainted by EKS for the update
 * (keepOnly; EKS taints every old node in its scale-up phase, so this finds them when the template's
 * versions were not read: a failed DescribeAutoScalingGroups lists none outdated). Still so after an
 * update that failed: EKS may have left it cordoned, and its retry replaces it.
 */
export function replacedByUpdate(node: PoolNode): boolean {
  return node.outdated === true || node.keepOnly === true;
}

/**
 * Whether an open removal may be called off when the target or the budget rises: not an over-ceiling one
 * on a node an update replaces, during the update or after it failed (its cordon may be EKS's, which an
 * uncordon would undo; found in review: after a failed update boa uncordoned the old nodes it had chosen).
 */
export function overCeilingOnOldNode(row: NodeRemovalRow, node: PoolNode | undefined): boolean {
  return row.reason === 'over-ceiling' && node !== undefined && replacedByUpdate(node);
}
