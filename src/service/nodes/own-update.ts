import type { Logger } from 'pino';
import type { Repository } from '../../store/repository.ts';
import type { NodeGroupState } from '../ports.ts';

/**
 * boa's own resize whose cloud update had not ended when it returned (EKS may keep one InProgress for
 * many minutes): its row stays `requested` until a pass sees the update ended, and nothing else is sent
 * meanwhile. `size` is what the group should then hold: the size sent, less boa's terminations since.
 */
export class OwnUpdate {
  private flight: { rowId: number; updateId: string; size: number } | undefined;
  /** The update `nodes.update-wait` was logged for (once per update). */
  private waitLogged: string | undefined;

  constructor(
    private readonly repo: Pick<Repository, 'updateResize'>,
    private readonly logger: Logger,
  ) {}

  /** A resize left with its update running (sent now, or stored before a restart). */
  track(rowId: number, updateId: string, size: number): void {
    this.flight = { rowId, updateId, size };
  }

  /** boa terminated a node: the group it waits for holds one fewer. */
  terminated(): void {
    if (this.flight) this.flight.size -= 1;
  }

  /** Logged once per update: what waits for boa's own update to end. */
  waitFor(updateId: string, want: number, group: NodeGroupState): void {
    if (want === group.desiredSize || this.waitLogged === updateId) return;
    this.waitLogged = updateId;
    this.logger.info(
      { event: 'nodes.update-wait', updateId, want, desiredSize: group.desiredSize },
      'own node group update still in progress; the new desired size is sent once it ends',
    );
  }

  /**
   * The update has ended when the group no longer reports it: its row is settled from the group itself,
   * `applied` if it holds the size, `failed` if not (the pool logged EKS's errors). True when it ended
   * now: the group's size is then boa's own, not drift. Level-triggered: the pass then asks for what is
   * wanted now either way.
   */
  ended(group: NodeGroupState): boolean {
    const flight = this.flight;
    if (flight === undefined || group.updateInFlight === flight.updateId) return false;
    this.flight = undefined;
    if (group.desiredSize === flight.size) {
      this.repo.updateResize(flight.rowId, { status: 'applied' });
    } else {
      const error = `EKS update ${flight.updateId} ended with the group at ${group.desiredSize}, not ${flight.size}`;
      this.repo.updateResize(flight.rowId, { status: 'failed', error });
      this.logger.warn({ event: 'resize_failed', target: flight.size, error }, 'resize failed');
    }
    return true;
  }
}

/**
 * EKS is applying an update boa did not send (a Kubernetes version or AMI update, a launch template
 * change, a config change by someone else): it raises the group's maximum and desired size for new
 * nodes, taints and drains the old ones, then gives the surge back. Scaling the surge in, or correcting
 * the desired size as drift, would work against it: boa removes only what the budget cannot pay for
 * (eks-update.ts).
 */
export function updatedByEks(group: NodeGroupState): boolean {
  return group.status === 'UPDATING' && group.updateInFlight === undefined;
}
