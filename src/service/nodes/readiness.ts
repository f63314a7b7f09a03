import type { PoolNode } from '../ports.ts';
import { listedIds } from './listing.ts';

/**
 * When each node was last seen ready for jobs, and what follows from it: a node that was ready and is
 * not now (NotReady for a moment, the device plugin restarting) gets a grace in which it is keep-only,
 * and its provision timeout counts from then, not from its launch. In memory: after a restart, a node
 * not ready with jobs on it counts from when boa first sees it (it was ready when they were placed),
 * one without from its launch.
 */
export class NodeReadiness {
  private readonly readyAt = new Map<string, number>();

  constructor(private readonly graceMs: number) {}

  /** Takes in the listing: ready nodes are stamped now, nodes no longer listed forgotten. */
  note(nodes: readonly PoolNode[], now: number): void {
    const listed = listedIds(nodes);
    for (const node of nodes) if (node.ready) this.readyAt.set(node.id, now);
    for (const id of this.readyAt.keys()) if (!listed.has(id)) this.readyAt.delete(id);
  }

  /**
   * Whether a node not ready is in its grace now. `holdsJobs` is asked only for a node seen for the
   * first time not ready: one holding jobs starts its grace now.
   */
  inGrace(node: PoolNode, now: number, holdsJobs: () => boolean): boolean {
    const unhealthy = node.waitingFor === 'not-ready' || node.waitingFor === 'no-gpus';
    if (!unhealthy || node.cordoned || node.leaving || !(this.graceMs > 0)) return false;
    if (!this.readyAt.has(node.id) && holdsJobs()) this.readyAt.set(node.id, now);
    const readyAt = this.readyAt.get(node.id);
    return readyAt !== undefined && now - readyAt < this.graceMs;
  }

  /** Not ready for jobs for `provisionMs`, counted from its launch or from when it was last seen ready. */
  overdue(node: PoolNode, now: number, provisionMs: number): boolean {
    const since = Math.max(node.launchedAt, this.readyAt.get(node.id) ?? Number.NEGATIVE_INFINITY);
    return now - since >= provisionMs;
  }
}
