import type { Logger } from 'pino';
import type { Repository } from '../../store/repository.ts';
import type { NodeGroupState, PoolNode } from '../ports.ts';
import { capUnits } from './paid-cap.ts';
import { chooseUpdateVictims, paidBeyondCeiling, removingPaid, spareOverCeiling } from './eks-update.ts';
import type { RemovalWalk } from './removals.ts';
import { allocationName, type GpusInUse } from './victims.ts';

/** Set while boa holds off the group during an EKS update. */
const HOLDING_KEY = 'nodes.eksUpdateHold';

export interface UpdateHoldDeps {
  readonly repo: Pick<Repository, 'getSetting' | 'putSetting' | 'deleteSetting'>;
  readonly logger: Logger;
  /** The configured GPUs of one of the group's nodes: each node counts as its GPUs' share (paid-cap.ts). */
  readonly settings?: { readonly gpusPerNode?: number };
}

/**
 * What the node reconciler does while EKS applies an update boa did not send (updatedByEks): it holds
 * off the group while the nodes paid are within the spend ceiling, and past it removes the excess
 * (eks-update.ts, docs/nodes.md point 9). Kept apart from the reconciler's own resizes and removals.
 */
export class EksUpdateHold {
  /**
   * Holding off the group. Stored: a restart before a pass saw the update end took the size EKS left
   * for drift (found in review).
   */
  private holding: boolean;
  /** `nodes.update-over-ceiling` was logged for the update under way (once per update). */
  private overCeilingLogged = false;

  constructor(
    private readonly deps: UpdateHoldDeps,
    private readonly removing: RemovalWalk,
  ) {
    this.holding = deps.repo.getSetting<boolean>(HOLDING_KEY) === true;
  }

  /**
   * The tick's choice during an update: the nodes the budget cannot pay for, none while within the
   * ceiling (the group is EKS's then). True when a chosen node has jobs (they move now, as chooseNow's).
   */
  choose(
    nodes: readonly PoolNode[],
    group: NodeGroupState,
    paidCap: number | undefined,
    busy: () => GpusInUse,
    now: number,
  ): boolean {
    // Nodes already being removed are still paid: they count in the excess, and are not chosen twice.
    // Both in the cap's units, each node at its own GPUs (eks-update.ts).
    const gpusPerNode = this.deps.settings?.gpusPerNode;
    const open = removingPaid(nodes, this.removing, gpusPerNode);
    const paidBeyond = paidBeyondCeiling(nodes, this.removing, paidCap, group, gpusPerNode);
    const excess = paidBeyond - open;
    if (excess <= 1e-9) return false;
    const load = busy();
    const kept = nodes.filter((n) => !n.leaving && !this.removing.includes(n.id));
    const victims = chooseUpdateVictims(kept, excess, load, (n) => capUnits(n, gpusPerNode));
    if (!this.overCeilingLogged) {
      this.overCeilingLogged = true;
      this.deps.logger.warn(
        {
          event: 'nodes.update-over-ceiling',
          paidCap,
          beyond: paidBeyond,
          nodes: victims.map((n) => n.name ?? n.id),
          desiredSize: group.desiredSize,
        },
        'node group update under way with more nodes paid than the budget allows; removing the excess, the nodes it replaces first',
      );
    }
    let placed = false;
    for (const victim of victims) {
      this.removing.choose(victim, 'over-ceiling', now);
      if (load(allocationName(victim)) > 0) placed = true;
    }
    return placed;
  }

  /** A tick with no EKS update under way: the next one's excess is logged again. */
  chooseOutside(): void {
    this.overCeilingLogged = false;
  }

  /**
   * The background pass during an update: removals go on only while over-ceiling ones are open or more
   * nodes are paid than the budget allows; nothing is resized (EKS refuses config updates meanwhile).
   */
  async pass(
    nodes: readonly PoolNode[],
    group: NodeGroupState,
    paidCap: () => number | undefined,
    target: number,
    busy: GpusInUse,
    carryOnRemovals: () => Promise<number>,
    now: number,
  ): Promise<void> {
    if (!this.holding) {
      this.deps.logger.info(
        { event: 'nodes.update-hold', desiredSize: group.desiredSize, target },
        'node group update under way; holding resizes, and removals while within the spend ceiling',
      );
      this.deps.repo.putSetting(HOLDING_KEY, true, now);
    }
    this.holding = true;
    this.removing.note(nodes);
    await this.callOffSpare(nodes, group, paidCap, busy);
    // Over-ceiling removals left go on (an old node's is EKS's to drain anyway): held, they kept a
    // cordoned node paid and unused until the update ended (found in review).
    const overCeiling = this.removing.rows().some((r) => r.reason === 'over-ceiling');
    if (
      overCeiling ||
      paidBeyondCeiling(nodes, this.removing, paidCap(), group, this.deps.settings?.gpusPerNode) > 0
    )
      await carryOnRemovals();
  }

  /**
   * The first pass after the update: true when boa was holding off, so the size EKS left (given back to
   * its size before, or less after removals meanwhile) is where boa starts from, not drift.
   */
  ended(): boolean {
    if (!this.holding) return false;
    this.deps.repo.deleteSetting(HOLDING_KEY);
    this.holding = false;
    return true;
  }

  /**
   * The over-ceiling removals the budget no longer asks for (it rose back) are called off, the busiest
   * node first, and their nodes uncordoned. Not on a node of the update's old version or marked by EKS
   * for it: EKS cordons and drains those itself, and an uncordon would undo it.
   */
  private async callOffSpare(
    nodes: readonly PoolNode[],
    group: NodeGroupState,
    paidCap: () => number | undefined,
    busy: GpusInUse,
  ): Promise<void> {
    // Counted again before each: a tick during an uncordon may cut the budget again, and a count taken
    // once called off removals it wanted, choosing them again next tick (found in review). A removal is
    // called off only when its node's GPUs fit in what is spare (a 4-GPU node in 1 GPU spare does not).
    const gpusPerNode = this.deps.settings?.gpusPerNode;
    const spare = () =>
      removingPaid(nodes, this.removing, gpusPerNode) -
      paidBeyondCeiling(nodes, this.removing, paidCap(), group, gpusPerNode);
    for (const { row, node } of spareOverCeiling(this.removing.rows(), nodes, busy)) {
      const left = spare();
      if (left <= 1e-9) break;
      if (left + 1e-9 >= capUnits(node, gpusPerNode)) await this.removing.cancel(row);
    }
  }
}
