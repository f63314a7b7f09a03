import type { Logger } from 'pino';
import { MIN_BILLED_MS } from './gone-nodes.ts';
import type { NodePool, PoolNode } from './ports.ts';

/**
 * Instances no listing showed running: launched and gone between two listings, or while boa was down
 * or its listings failed. EC2 billed them (from running, 60 s at least) and the ledger, which opens a
 * node from a listing, never charged them (test/service/ledger-vs-ec2-bill.test.ts). Each listing asks
 * the pool for the launches since the one before (NodePool.launchedSince; on EKS the Auto Scaling
 * group's activities) and the ledger charges those it has no row for, from launch until gone.
 */

/** Looked back before the last listing: an instance pending at it (listed, not charged yet) may be gone now. */
const MARGIN_MS = 10 * 60_000;

export interface UnseenSpan {
  readonly id: string;
  readonly gpus: number;
  readonly launchedAt: number;
  readonly goneAt: number;
}

export class UnseenNodes {
  /** The listing the next read looks back to (after a restart, the last tick before it). */
  private since: number;
  /** The last read failed: the next starts from the same listing. */
  private unread = false;

  constructor(lastListedAt: number) {
    this.since = lastListedAt;
  }

  /**
   * The listing the next read looks back from (after a restart, the last tick before it): the ledger
   * has counted its open nodes paid until then.
   */
  get lastListedAt(): number {
    return this.since;
  }

  /**
   * Launches since the last listing that this one (`listed`) does not hold (`spans`): charged from
   * launch until gone, or until now when the group has not said (yet) when it was; and when each
   * termination since ended (`gone`, gone-nodes.ts). A failed read charges nothing now and is read
   * again from the same listing next time.
   */
  async read(
    pool: NodePool,
    listed: readonly PoolNode[],
    gpusPerNode: number,
    now: number,
    logger: Logger,
  ): Promise<{ spans: UnseenSpan[]; gone: ReadonlyMap<string, number> }> {
    const none = { spans: [], gone: new Map<string, number>() };
    if (!pool.launchedSince) return none;
    let changes;
    try {
      changes = await pool.launchedSince(this.since - MARGIN_MS);
      this.unread = false;
    } catch (error) {
      this.unread = true;
      logger.warn(
        { event: 'node.launches-unreadable', error: (error as Error).message },
        'cannot read the launches since the last listing; instances that came and went meanwhile are charged once they can',
      );
      return none;
    }
    const shown = new Set(listed.map((node) => node.id));
    const spans = changes.launched
      .filter((instance) => !shown.has(instance.id))
      .map((instance) => ({
        id: instance.id,
        gpus: instance.gpus ?? gpusPerNode,
        launchedAt: instance.launchedAt,
        goneAt: Math.max(instance.goneAt ?? now, instance.launchedAt + MIN_BILLED_MS),
      }));
    return { spans, gone: changes.gone };
  }

  /** The spans read at the listing of `listedAt` are stored: the next read starts from it (if read). */
  advance(listedAt: number): void {
    if (!this.unread) this.since = Math.max(this.since, listedAt);
  }
}
