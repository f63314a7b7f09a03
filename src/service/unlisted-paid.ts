import { isBilled } from './paid-now.ts';
import type { PoolNode } from './ports.ts';

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
 */
export class UnlistedPaid {
  private spans: Span[] = [];
  /** The last tick that listed the pool or counted a span; undefined before the first listing. */
  private lastAt: number | undefined;
  /** GPUs of the billed nodes, not leaving, of the listing the ledger last stored. */
  private shown = 0;
  private storedAt: number | undefined;

  /**
   * A tick's listing was stored at `at`: the ledger holds what it showed. Not a listing between ticks
   * (after a raise), which the ledger never saw: its new nodes still count as unlisted.
   */
  listed(at: number, nodes: readonly PoolNode[]): void {
    this.spans = [];
    this.lastAt = at;
    this.storedAt = at;
    this.shown = 0;
    for (const node of nodes) if (isBilled(node) && !node.leaving) this.shown += node.gpus;
  }

  /** When the listing the ledger last stored was taken (undefined before the first). */
  get listedAt(): number | undefined {
    return this.storedAt;
  }

  /**
   * A tick's listing failed: since the tick before, the group may have paid for `desiredNodes` (what it
   * last said, or what boa asked of it since, whichever is more: a raise counts from the tick before,
   * the worst case), beyond the nodes of the stored listing (the ledger holds those open, paid to now).
   */
  failed(now: number, desiredNodes: number, gpusPerNode: number): void {
    const from = this.lastAt;
    this.lastAt = now;
    if (from === undefined || now <= from) return;
    const gpus = Math.max(0, desiredNodes * gpusPerNode - this.shown);
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
