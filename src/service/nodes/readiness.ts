import type { PoolNode } from '../ports.ts';
import { listedIds, sameIds } from './listing.ts';

/** The stamp of a node ready at the last listing noted: read as that note's time (`notedAt`). */
const READY = Number.POSITIVE_INFINITY;

/**
 * When each node was last seen ready for jobs, and what follows from it: a node that was ready and is
 * not now (NotReady for a moment, the device plugin restarting) gets a grace in which it is keep-only,
 * and its provision timeout counts from then, not from its launch. In memory: after a restart, a node
 * not ready with jobs on it counts from when boa first sees it (it was ready when they were placed),
 * one without from its launch.
 */
export class NodeReadiness {
  /**
   * When each listed node was last seen ready; READY for the nodes ready at the last note, so that a
   * tick listing the same nodes writes only the few whose readiness changed, not 1,400 stamps.
   */
  private readonly readyAt = new Map<string, number>();
  /** The listing last noted, when; whether its ids were distinct (the walk below relies on it). */
  private noted: readonly PoolNode[] | undefined;
  private notedAt = 0;
  private distinct = false;
  /** inGrace stamped a node since the last note: it may not be listed, so the next note checks all. */
  private stampedSince = false;

  constructor(private readonly graceMs: number) {}

  /** Takes in the listing: ready nodes are stamped now, nodes no longer listed forgotten. */
  note(nodes: readonly PoolNode[], now: number): void {
    const last = this.noted;
    const lastAt = this.notedAt;
    this.noted = nodes;
    this.notedAt = now;
    if (last !== undefined && this.distinct && !this.stampedSince && sameIds(last, nodes)) {
      // The same nodes: every stamp is of a listed node, and only a change of readiness is written.
      for (let i = 0; i < nodes.length; i++) {
        const node = nodes[i] as PoolNode;
        if (node.ready === (last[i] as PoolNode).ready) continue;
        this.readyAt.set(node.id, node.ready ? READY : lastAt);
      }
      return;
    }
    this.stampedSince = false;
    const listed = listedIds(nodes);
    this.distinct = listed.size === nodes.length;
    // Nodes ready at the last note and not now were last seen ready then.
    for (const node of nodes)
      if (!node.ready && this.readyAt.get(node.id) === READY) this.readyAt.set(node.id, lastAt);
    for (const node of nodes) if (node.ready) this.readyAt.set(node.id, READY);
    for (const id of this.readyAt.keys()) if (!listed.has(id)) this.readyAt.delete(id);
  }

  /** When the node was last seen ready (or its grace started), undefined if never since it was listed. */
  lastReady(nodeId: string): number | undefined {
    const at = this.readyAt.get(nodeId);
    return at === READY ? this.notedAt : at;
  }

  /**
   * Whether a node not ready is in its grace now. `holdsJobs` is asked only for a node seen for the
   * first time not ready: one holding jobs starts its grace now.
   */
  inGrace(node: PoolNode, now: number, holdsJobs: () => boolean): boolean {
    const unhealthy = node.waitingFor === 'not-ready' || node.waitingFor === 'no-gpus';
    if (!unhealthy || node.cordoned || node.leaving) return false;
    // Holding jobs, it was ready when they were placed: counted from now, with a grace or without one.
    if (!this.readyAt.has(node.id) && holdsJobs()) this.holdsReplicas(node, now);
    if (!(this.graceMs > 0)) return false;
    const readyAt = this.lastReady(node.id);
    return readyAt !== undefined && now - readyAt < this.graceMs;
  }

  /**
   * A node not ready, with jobs or replicas on it (running or stopping), that boa has not seen ready since it
   * started: it was ready when they were placed, so its time counts from now, whatever the grace (after
   * a restart, counted from its launch, a moment's NotReady read as never ready and cost the node).
   */
  holdsReplicas(node: PoolNode, now: number): void {
    if (this.readyAt.has(node.id)) return;
    this.readyAt.set(node.id, now);
    this.stampedSince = true;
  }

  /** Not ready for jobs for `provisionMs`, counted from its launch or from when it was last seen ready. */
  overdue(node: PoolNode, now: number, provisionMs: number): boolean {
    const since = Math.max(node.launchedAt, this.lastReady(node.id) ?? Number.NEGATIVE_INFINITY);
    return now - since >= provisionMs;
  }
}
