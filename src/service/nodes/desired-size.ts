import type { Logger } from 'pino';
import type { Repository, ResizeRow } from '../../store/repository.ts';
import type { Clock, NodeGroupState, NodePool, PoolNode } from '../ports.ts';
import { OwnUpdate } from './own-update.ts';

/** Where the desired size boa expects is kept across restarts. */
const EXPECTED_SIZE_KEY = 'nodes.expectedDesiredSize';
/** Where a resize whose call failed is kept until the group says whether it went through. */
const FAILED_SEND_KEY = 'nodes.failedResize';

interface FailedSend {
  readonly rowId: number;
  readonly from: number;
  readonly to: number;
}

export interface DesiredSizeDeps {
  readonly pool: NodePool;
  readonly repo: Pick<
    Repository,
    'insertResize' | 'updateResize' | 'lastResize' | 'getSetting' | 'putSetting' | 'deleteSetting'
  >;
  readonly clock: Clock;
  readonly logger: Logger;
}

/**
 * The node group's desired size as boa expects it, and the resizes boa sends: each stored before it is
 * sent, confirmed from the group after a crash, and followed while its cloud update runs (own-update.ts).
 * A size the group shows otherwise was changed outside boa (drift). The expectation is stored, since
 * boa's terminations lower it too: a restart that went by the last resize alone saw its own scale-in as
 * a change from outside.
 */
export class DesiredSize {
  private expected: number | undefined;
  /** A resize stored but not answered before a crash: the group's desired size says if it went through. */
  private unconfirmed: ResizeRow | undefined;
  /**
   * A resize whose call failed: it may have gone through all the same (a timeout that lost the reply,
   * an update that was followed no further). The group says so once nothing is being applied to it.
   */
  private failedSend: FailedSend | undefined;
  private readonly ownUpdate: OwnUpdate;

  constructor(private readonly deps: DesiredSizeDeps) {
    this.ownUpdate = new OwnUpdate(deps.repo, deps.logger);
    const last = deps.repo.lastResize();
    // None stored (a new data dir, or one from before it was stored): the first pass takes the group's
    // size as it finds it. The last resize is no stand-in: boa's terminations since lowered the size.
    this.expected = deps.repo.getSetting<number>(EXPECTED_SIZE_KEY);
    // Stored: a restart before the group said so took boa's own resize for drift (found in review).
    this.failedSend = deps.repo.getSetting<FailedSend>(FAILED_SEND_KEY);
    if (last?.status === 'requested' && last.updateId && deps.pool.adoptUpdate) {
      // Its update may still run (EKS can keep one InProgress for many minutes): followed as before the
      // restart, not refused resizes until it ends. The size boa expects counts its terminations since.
      deps.pool.adoptUpdate(last.updateId);
      this.ownUpdate.track(last.id, last.updateId, this.expected ?? last.requested);
    } else if (last?.status === 'requested') this.unconfirmed = last;
  }

  /** At a pass's start: a resize a crash left unanswered is settled, and boa's own update followed. */
  observe(group: NodeGroupState): void {
    this.confirmInterrupted(group);
    this.confirmFailedSend(group);
    this.followOwnUpdate(group);
  }

  /**
   * What boa expected when the group holds another size with no update of boa's own running.
   * `unanswered`: boa's terminates sent with no answer kept (a timeout, a crash), each of which may have
   * lowered the size by one: a size that much lower is boa's own doing (found in review).
   */
  drift(group: NodeGroupState, unanswered = 0): number | undefined {
    if (group.updateInFlight || this.expected === undefined) return undefined;
    const size = group.desiredSize;
    if (size < this.expected && size >= this.expected - unanswered) return undefined;
    return size !== this.expected ? this.expected : undefined;
  }

  /**
   * boa terminated a node and lowered the desired size by one: stored at once, so a crash or a failing
   * step before the size is read again is not taken for a change from outside.
   */
  terminated(): void {
    if (this.expected !== undefined) this.expect(this.expected - 1);
    this.ownUpdate.terminated();
  }

  /** The group as found is boa's to hold from here (no update of boa's own in flight). */
  accept(group: NodeGroupState): void {
    this.expect(group.desiredSize);
  }

  /** boa's own update still runs: the size wanted waits for it (logged once per update). */
  waitFor(updateId: string, want: number, group: NodeGroupState): void {
    this.ownUpdate.waitFor(updateId, want, group);
  }

  /** The group as reported after a resize: an update of boa's that has ended makes its size boa's. */
  followOwnUpdate(group: NodeGroupState): void {
    if (this.ownUpdate.ended(group)) this.expect(group.desiredSize);
  }

  /**
   * Sets the desired size (stored before it is sent). Lowering it lets the group pick which instances
   * go, so every node boa keeps is protected from scale-in first, idle ones too: a tick may place a job
   * on an idle one while the pass runs in the background, and only launches boa never saw (the ones it
   * means to cancel) are left to go. boa removes nodes one by one itself. True when the resize was sent.
   * Whether it lowers the size is read from the group now when the copy given says it does not: the
   * tick's copy misses a raise made since (found in review: the group then picked a busy node to go).
   */
  async send(want: number, group: NodeGroupState, nodes: readonly PoolNode[], now: number): Promise<boolean> {
    const { pool, repo, logger } = this.deps;
    this.settleFailedSend();
    let previous = group.desiredSize;
    let lowering = want < previous;
    if (!lowering) {
      try {
        previous = (await pool.describe()).desiredSize;
        lowering = want < previous;
      } catch {
        lowering = true; // not known: protecting costs one call, a busy node lost costs a job's restart
      }
    }
    if (lowering)
      await pool.protect(
        nodes.filter((n) => !n.leaving).map((n) => n.id),
        true,
      );
    const row = repo.insertResize({ at: now, target: want, requested: want, status: 'requested' });
    logger.info({ event: 'resize', target: want, previous }, 'node group resize');
    try {
      const result = await pool.setDesiredSize(want);
      // With an update id, the row stays `requested` until a pass sees the update ended (OwnUpdate):
      // it may still be running. A crash meanwhile leaves it to the restart's confirmInterrupted.
      repo.updateResize(row.id, {
        status: result.updateId ? 'requested' : 'applied',
        requested: result.requested,
        updateId: result.updateId ?? null,
      });
      if (result.updateId) this.ownUpdate.track(row.id, result.updateId, result.requested);
      this.expect(result.requested);
      return true;
    } catch (error) {
      repo.updateResize(row.id, { status: 'failed', error: (error as Error).message });
      this.failedSend = { rowId: row.id, from: previous, to: want };
      repo.putSetting(FAILED_SEND_KEY, this.failedSend, now);
      logger.error(
        { event: 'resize_failed', target: want, error: (error as Error).message },
        'resize failed',
      );
      return false;
    }
  }

  /**
   * The service stopped between storing a resize and recording the group's answer. If the group holds
   * that size the call went through; otherwise it is marked `interrupted` (never arrived, or not yet
   * visible: the pass that follows asks for what is wanted now either way, level-triggered) instead of
   * staying `requested` for good.
   */
  private confirmInterrupted(group: NodeGroupState): void {
    const row = this.unconfirmed;
    if (row === undefined) return;
    this.unconfirmed = undefined;
    if (group.desiredSize === row.requested) {
      this.deps.repo.updateResize(row.id, { status: 'applied' });
      this.expect(row.requested);
    } else {
      this.deps.repo.updateResize(row.id, {
        status: 'interrupted',
        error: `the service stopped before the node group answered; the group holds ${group.desiredSize}`,
      });
    }
  }

  /**
   * A resize whose call failed but whose size the group holds went through (its reply was lost): the
   * size is boa's own, not a change from outside to log as drift (found in review), and its row says
   * applied. A size between the one before and the one sent counts too: the pool clamps to its hard cap.
   * Judged once the group is no longer updating, since the lost call may have started an EKS update.
   */
  private confirmFailedSend(group: NodeGroupState): void {
    const sent = this.failedSend;
    if (sent === undefined || group.updateInFlight || group.status === 'UPDATING') return;
    this.settleFailedSend();
    const size = group.desiredSize;
    const low = Math.min(sent.from, sent.to);
    const high = Math.max(sent.from, sent.to);
    if (size === sent.from || size < low || size > high) return;
    this.deps.repo.updateResize(sent.rowId, { status: 'applied', requested: size, error: null });
    this.deps.logger.info(
      { event: 'resize.went-through', requested: sent.to, desiredSize: size },
      'a resize whose call failed went through',
    );
    this.expect(size);
  }

  /** The failed resize is judged (or another sent): nothing left to confirm, here or after a restart. */
  private settleFailedSend(): void {
    if (this.failedSend === undefined) return;
    this.failedSend = undefined;
    this.deps.repo.deleteSetting(FAILED_SEND_KEY);
  }

  private expect(size: number): void {
    if (size === this.expected) return;
    this.expected = size;
    this.deps.repo.putSetting(EXPECTED_SIZE_KEY, size, this.deps.clock.now());
  }
}
