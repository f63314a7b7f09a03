import { isBilled } from './paid-now.ts';
import type { PoolNode } from './ports.ts';
import type { UnlistedPaidSnapshot } from './unlisted-paid-snapshot.ts';

interface Span {
  readonly from: number;
  to: number;
  readonly gpus: number;
}

/**
 * GPUs the node group may be paying for that no listing has shown, while the pool's listing fails: the
 * spend ceiling counts them as paid. The ledger opens a node from a listing, so a node launched during
 * the outage (boa still resizes the group from the last listing) was missing from the ceiling's paid
 * until the listing came back, and the ceiling kept the room it had lent as if unspent: a burst while
 * the listing failed paid 2.2x the budget over the window (test/service/budget-listing-outage.test.ts).
 * Cleared by the first listing stored after it: from then on the ledger holds those nodes, from launch.
 * Stored with each tick's writes (snapshot) and restored at start: a boa restarted in the outage kept
 * counting them, the time it was down included (test/service/budget-listing-outage-restart.test.ts).
 */
export class UnlistedPaid {
  private spans: Span[] = [];
  /** The last tick that listed the pool or counted a span; undefined before the first listing. */
  private lastAt: number | undefined;
  /** GPUs of the billed nodes, not leaving, of the listing the ledger last stored. */
  private shown = 0;
  private storedAt: number | undefined;
  private desired = 0;
  /** The GPUs of one of the group's nodes as last known (NodeGroupState.gpusPerNode); undefined: not known. */
  private nodeGpusKnown: number | undefined;

  /** What is kept across a restart: stored in the tick's transaction, as of its end. */
  snapshot(): UnlistedPaidSnapshot {
    return {
      spans: this.spans.map((span) => ({ ...span })),
      ...(this.lastAt !== undefined ? { lastAt: this.lastAt } : {}),
      shown: this.shown,
      ...(this.storedAt !== undefined ? { storedAt: this.storedAt } : {}),
      desiredNodes: this.desired,
      ...(this.nodeGpusKnown !== undefined ? { nodeGpus: this.nodeGpusKnown } : {}),
    };
  }

  /** As stored by the last tick committed before a restart. */
  restore(stored: UnlistedPaidSnapshot): void {
    this.spans = stored.spans.map((span) => ({ ...span }));
    this.lastAt = stored.lastAt;
    this.shown = stored.shown;
    this.storedAt = stored.storedAt;
    this.desired = stored.desiredNodes;
    this.nodeGpusKnown = stored.nodeGpus;
  }

  /**
   * What listed(at, nodes, desiredNodes, nodeGpus) leaves, without changing anything: stored in the
   * transaction that stores the listing, applied once it commits.
   */
  static afterListing(
    at: number,
    nodes: readonly PoolNode[],
    desiredNodes: number,
    nodeGpus?: number,
  ): UnlistedPaidSnapshot {
    let shown = 0;
    for (const node of nodes) if (isBilled(node) && !node.leaving) shown += node.gpus;
    return {
      spans: [],
      lastAt: at,
      shown,
      storedAt: at,
      desiredNodes,
      ...(nodeGpus !== undefined ? { nodeGpus } : {}),
    };
  }

  /**
   * A tick's listing was stored at `at`: the ledger holds what it showed. Not a listing between ticks
   * (after a raise), which the ledger never saw: its new nodes still count as unlisted. `desiredNodes`:
   * the group's desired size as described with it (0 when not); `nodeGpus`: its GPUs per node where
   * known (NodeGroupState.gpusPerNode).
   */
  listed(at: number, nodes: readonly PoolNode[], desiredNodes: number, nodeGpus?: number): void {
    this.restore(UnlistedPaid.afterListing(at, nodes, desiredNodes, nodeGpus));
  }

  /** boa lowered the group to `desiredNodes` without a listing (blind-trim.ts): counted so next. */
  resized(desiredNodes: number): void {
    this.desired = desiredNodes;
  }

  /** The group's desired size as last known: described with the stored listing, or counted since. */
  get desiredNodes(): number {
    return this.desired;
  }

  /**
   * The GPUs of one of the group's nodes as last known: described with the stored listing, or counted
   * at since (undefined: not known). Stored, so a restart in the outage, which cannot describe the
   * group, still counts its nodes at their own GPUs rather than the configured ones.
   */
  get nodeGpus(): number | undefined {
    return this.nodeGpusKnown;
  }

  /** When the listing the ledger last stored was taken (undefined before the first). */
  get listedAt(): number | undefined {
    return this.storedAt;
  }

  /**
   * A tick's listing failed: since the tick before, the group may have paid for `desiredNodes` (what it
   * last said, or what boa asked of it since, whichever is more: a raise counts from the tick before,
   * the worst case), beyond the nodes of the stored listing (the ledger holds those open, paid to now).
   * The first after a restart counts from the last tick stored before it: the group paid on while boa
   * was down, at the size boa last asked for (the guard outside only lowers it). Each node at
   * `nodeGpus`, the group's GPUs per node where known (kept for the next count), else `gpusPerNode`
   * (the configured): at the configured 1 GPU, two 4-GPU nodes beyond a listing showing one counted
   * nothing, as 2 x 1 < 4 (test/service/listing-outage-instance-gpus.test.ts).
   */
  failed(now: number, desiredNodes: number, nodeGpus: number | undefined, gpusPerNode: number): void {
    const from = this.lastAt;
    // Never back: a clock behind the stored tick's (a restart on another host) counted a span twice.
    this.lastAt = from === undefined ? now : Math.max(from, now);
    this.desired = desiredNodes;
    if (nodeGpus !== undefined) this.nodeGpusKnown = nodeGpus;
    if (from === undefined || now <= from) return;
    const gpus = Math.max(0, desiredNodes * (nodeGpus ?? this.nodeGpusKnown ?? gpusPerNode) - this.shown);
    if (gpus <= 0) return;
    // One span per stretch at the same count: an outage of days at 60 s ticks stays a few spans.
    const last = this.spans[this.spans.length - 1];
    if (last !== undefined && last.gpus === gpus && last.to === from) last.to = now;
    else this.spans.push({ from, to: now, gpus });
  }

  /** GPU-ms the spans count within [from, to]. */
  gpuMs(from: number, to: number): number {
    let sum = 0;
    for (const span of this.spans)
      sum += span.gpus * Math.max(0, Math.min(to, span.to) - Math.max(from, span.from));
    return sum;
  }
}
