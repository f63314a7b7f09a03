import type { Logger } from 'pino';
import { CloudError } from '../errors.ts';
import type { NodegroupRef } from './ec2-nodes.ts';
import { awaitUpdate, type EksContext, readUpdate } from './eks-nodegroup.ts';
import { idempotencyToken, type ResizeIntent } from './idempotency.ts';
import { AwsCallError } from './retry.ts';

/** Failed updates are rare; the spent tokens are bounded all the same (the oldest first out). */
const MAX_SPENT_TOKENS = 100;

/**
 * The node pool's own EKS update, at most one in flight: followed for `waitMs` once sent, then left in
 * flight and read once a pass until it ends (EKS refuses a second update meanwhile).
 */
export class OwnEksUpdate {
  private updateId: string | undefined;
  private token: string | undefined;
  /**
   * Tokens whose update ended Failed or Cancelled. Such an update applied nothing, so the same resize
   * starts again from the same group state and would compute the same token, which EKS answers with the
   * failed update instead of trying again: it gets a new one.
   */
  private readonly spentTokens = new Set<string>();

  constructor(
    private readonly ctx: EksContext,
    private readonly logger: Logger,
    private readonly waitMs: number,
    /** The group as last found (it is followed when replaced). */
    private readonly group: () => NodegroupRef,
  ) {}

  /** The idempotency token of a resize's intent, a new one when that intent's update failed before. */
  tokenFor(intent: ResizeIntent): string {
    let token = idempotencyToken(intent);
    for (let retry = 1; this.spentTokens.has(token); retry++) {
      token = idempotencyToken({ ...intent, generation: `${intent.generation}~${retry}` });
    }
    return token;
  }

  /**
   * An update just sent, followed for `waitMs`: a Failed or Cancelled one is an error carrying EKS's own
   * errors; one still InProgress stays in flight for stillRunning() to follow.
   */
  async follow(updateId: string, token: string, fields: Record<string, unknown>): Promise<void> {
    this.updateId = updateId;
    this.token = token;
    this.logger.info({ event: 'resize.issued', ...fields, updateId, token }, 'resize issued');
    const outcome = await awaitUpdate(this.group(), updateId, this.ctx, this.waitMs);
    if (outcome.status === 'InProgress') {
      this.logger.info(
        { event: 'resize.in-flight', ...fields, updateId, waitedMs: this.waitMs },
        'update still in progress; left in flight',
      );
      return;
    }
    this.settled(outcome.status);
    if (outcome.status === 'Successful') {
      this.logger.info({ event: 'resize.succeeded', ...fields, updateId }, 'resize succeeded');
      return;
    }
    const errors = outcome.errors.length ? outcome.errors.join('; ') : 'no errors reported';
    throw new CloudError(
      `EKS update ${updateId} (desiredSize ${String(fields.requested)}) ended ${outcome.status}: ${errors}`,
      'DescribeUpdate',
    );
  }

  /** An update a restarted service found stored: its token is not known, so a failed one is sent anew. */
  adopt(updateId: string): void {
    this.updateId ??= updateId;
  }

  /** The group was replaced: its updates are not this one's to wait for. */
  forget(): void {
    this.updateId = undefined;
    this.token = undefined;
  }

  /**
   * The update, if one is in flight: one DescribeUpdate. One that has ended is settled here (logged with
   * its outcome), so the next resize may be sent; one that cannot be read counts as in flight.
   */
  async stillRunning(): Promise<string | undefined> {
    const updateId = this.updateId;
    if (!updateId) return undefined;
    let outcome;
    try {
      outcome = await readUpdate(this.group(), updateId, this.ctx);
    } catch (error) {
      const cause = error instanceof AwsCallError ? (error.cause as Error | undefined) : undefined;
      if (cause?.name !== 'ResourceNotFoundException') {
        // Unread (throttled past the retries, an outage), it counts as still running: nothing else is
        // sent meanwhile, as while it runs. Thrown, it failed describe(), and a tick then had no group
        // or a stale one, so no pass removed a node either (found in review).
        this.logger.warn(
          { event: 'update.unreadable', updateId, error: (error as Error).message },
          'own update not readable; counted as still running',
        );
        return updateId;
      }
      // EKS no longer knows it (an id stored long ago, a group replaced): nothing to wait for.
      this.logger.warn({ event: 'update.unknown', updateId }, 'own update not found; not waiting for it');
      if (this.updateId === updateId) this.updateId = undefined;
      return this.updateId;
    }
    if (outcome.status === 'InProgress') return updateId;
    // A resize settled it while this was read, or sent a newer one: that is the state now.
    if (this.updateId !== updateId) return this.updateId;
    this.settled(outcome.status);
    const level = outcome.status === 'Successful' ? 'info' : 'warn';
    this.logger[level](
      { event: 'update.settled', updateId, status: outcome.status, errors: outcome.errors },
      'own update ended',
    );
    return undefined;
  }

  /** The update ended; one that did not succeed leaves its token spent. */
  private settled(status: string): void {
    if (status !== 'Successful' && this.token) {
      this.spentTokens.add(this.token);
      if (this.spentTokens.size > MAX_SPENT_TOKENS)
        this.spentTokens.delete(this.spentTokens.values().next().value!);
    }
    this.forget();
  }
}
