/**
 * What a tick writes to the store, in one transaction (the scheduler rolls memory back when it fails):
 * the allocation interval, the jobs it changed, the ledger's nodes as listed, nodes no listing showed,
 * the tick's time, and the unlisted-paid count as it stands after the listing.
 */
import { goneAtOf } from './gone-nodes.ts';
import type { ServiceJob } from './jobs.ts';
import { isBilled } from './paid-now.ts';
import type { BoaService } from './service.ts';
import { UnlistedPaid } from './unlisted-paid.ts';
import { UNLISTED_PAID_KEY } from './unlisted-paid-snapshot.ts';
import type { UnseenSpan } from './unseen-nodes.ts';

export interface TickRecord {
  readonly now: number;
  readonly changed: readonly ServiceJob[];
  /** The pool listed its nodes this tick (state.nodes is that listing). */
  readonly listed: boolean;
  /** When each termination since the last listing ended (gone-nodes.ts). */
  readonly gone: ReadonlyMap<string, number>;
  /** The listing before this one (unseen-nodes.ts lastListedAt). */
  readonly lastListedAt: number;
  /** Launches since the last listing that this one does not hold. */
  readonly unseen: readonly UnseenSpan[];
  /** The group's size described with this listing (a failed describe leaves the last one). */
  readonly groupSize: number;
}

export function recordTick(service: BoaService, tick: TickRecord): void {
  const { state, deps } = service;
  const { repo, logger } = deps;
  const { now, listed, unseen } = tick;
  repo.transaction(() => {
    service.flushAllocation(now);
    for (const job of tick.changed) repo.saveJobState(job);
    // Billing starts at EC2 running: a pending instance is not in the ledger yet (once running it
    // is counted from its launch, pending seconds in: aws/ec2-nodes.ts). Without a listing
    // this tick (the pool not answering, after a restart the view is empty) the ledger's open
    // nodes stay open: paid until a listing says they are gone, never dropped; then until their
    // termination ended, when the group says (gone-nodes.ts).
    if (listed) {
      const goneAt = goneAtOf(tick.gone, tick.lastListedAt, now);
      repo.ledger.observeNodes(state.nodes.filter(isBilled), now, goneAt);
    }
    for (const id of repo.ledger.chargeUnseenNodes(unseen, now)) {
      const span = unseen.find((u) => u.id === id);
      logger.info({ event: 'node.unseen-charged', nodeId: id, ...span }, 'charged a node no listing showed');
    }
    repo.setLastTick(now);
    // The ledger holds the listed nodes from here (from their launch): no longer counted apart. Stored
    // with the listing, so a restart neither loses the count nor counts a span the ledger holds.
    repo.putSetting(
      UNLISTED_PAID_KEY,
      listed
        ? UnlistedPaid.afterListing(now, state.nodes, tick.groupSize, state.group?.gpusPerNode)
        : state.unlisted.snapshot(),
      now,
    );
  });
}
