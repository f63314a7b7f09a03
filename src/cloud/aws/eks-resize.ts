// One resize of the node group, waiting out another update that holds it: apart from the pool's reads.
import type { Logger } from 'pino';
import type { ResizeResult } from '../../service/ports.ts';
import { clampToBounds } from '../bounds.ts';
import { CloudError } from '../errors.ts';
import { backoffDelay, type RetryPolicy } from '../retry.ts';
import type { NodegroupRef } from './ec2-nodes.ts';
import { type EksContext, type NodegroupScaling, requestDesiredSize } from './eks-nodegroup.ts';
import type { OwnEksUpdate } from './eks-own-update.ts';
import type { EksNodePoolConfig } from './eks-pool-config.ts';
import { AwsCallError } from './retry.ts';

/** What a resize needs of its EksNodePool. */
export interface ResizeDeps {
  readonly config: EksNodePoolConfig;
  readonly ctx: EksContext;
  readonly logger: Logger;
  /** While another update holds the group (EksNodePoolConfig.inUse). */
  readonly inUse: RetryPolicy;
  readonly ownUpdate: OwnEksUpdate;
  /** The group as last found: readGroup follows it when it is replaced. */
  readonly ref: () => NodegroupRef;
  readonly readGroup: () => Promise<NodegroupScaling>;
  /** Why a raise is refused now (a group of another GPU count than configured), if it is. */
  readonly refuseRaise?: () => string | undefined;
}

/**
 * Sets the group's desiredSize to `target`, clamped to its bounds and the hard cap; refused at once
 * while the pool's own update is still InProgress.
 */
export async function resizeNodegroup(target: number, pool: ResizeDeps): Promise<ResizeResult> {
  pool.logger.info({ event: 'resize.requested', target }, 'resize requested');
  const pending = await pool.ownUpdate.stillRunning();
  if (pending) {
    // EKS would refuse a second update (ResourceInUseException); waiting for this one could take
    // many minutes. The caller asks again later, and it is sent once the update has ended.
    pool.logger.info({ event: 'resize.deferred', target, updateId: pending }, 'own update still running');
    throw new CloudError(
      `EKS update ${pending} of ${pool.ref().clusterName}/${pool.ref().nodegroupName} still InProgress; ` +
        `desired size ${target} not sent (one update at a time): ask again once it has ended`,
      'UpdateNodegroupConfig',
    );
  }
  let raising: boolean | undefined;
  for (let attempt = 1; ; attempt++) {
    // Re-read every attempt: whoever held the group may have changed its bounds or desired size.
    const group = await pool.readGroup();
    const { requested, clampedBy } = clampToBounds(target, group, pool.config.hardCap);
    const fields = {
      target,
      requested,
      desiredSize: group.desiredSize,
      minSize: group.minSize,
      maxSize: group.maxSize,
      hardCap: pool.config.hardCap,
    };
    if (clampedBy) pool.logger.info({ event: 'resize.clamped', ...fields, clampedBy }, 'resize clamped');
    if (requested === group.desiredSize) {
      pool.logger.info({ event: 'resize.skipped', ...fields, reason: 'unchanged' }, 'resize skipped');
      return { requested };
    }
    raising ??= requested > group.desiredSize;
    const refusal = requested > group.desiredSize ? pool.refuseRaise?.() : undefined;
    if (refusal) {
      // The reconciler holds raises back already (NodeGroupState.refusesRaises); this is the pool's own
      // guarantee for any caller.
      pool.logger.warn({ event: 'resize.refused', ...fields, reason: refusal }, 'resize refused');
      throw new CloudError(
        `node group ${pool.config.clusterName}/${pool.config.nodegroupName}: raise to ${requested} refused: ${refusal}`,
        'UpdateNodegroupConfig',
      );
    }
    if (raising && requested < group.desiredSize) {
      // The caller protects boa's nodes only before a lowering: a raise that the update it waited out
      // turned into one would let the group pick which nodes go, busy ones too (found in review).
      pool.logger.warn({ event: 'resize.turned-lowering', ...fields }, 'resize not sent: now a lowering');
      throw new CloudError(
        `node group ${pool.config.clusterName}/${pool.config.nodegroupName}: another update set its desired ` +
          `size to ${group.desiredSize} while boa waited to raise it to ${requested}; a lowering is not ` +
          `sent in its place (boa's nodes are protected only before one): the next pass decides again`,
        'UpdateNodegroupConfig',
      );
    }
    // The attempt is part of the generation: a request refused as in-use applied nothing, so its
    // successor may not be answered from it; retries of one attempt (throttling, timeouts) share a token.
    const generation = `${group.generation}#${attempt}`;
    const intent = { ...pool.config, ...pool.ref(), desiredSize: requested, generation };
    const token = pool.ownUpdate.tokenFor(intent);
    try {
      const update = await requestDesiredSize(pool.ref(), requested, token, pool.ctx);
      await pool.ownUpdate.follow(update.id, token, fields);
      return { requested, updateId: update.id };
    } catch (error) {
      if (!(error instanceof AwsCallError && error.kind === 'in-use')) {
        pool.logger.error(
          { event: 'resize.failed', ...fields, error: (error as Error).message },
          'resize failed',
        );
        throw error;
      }
      if (attempt >= pool.inUse.maxAttempts) {
        pool.logger.error({ event: 'resize.failed', ...fields, attempt, reason: 'in-use' }, 'resize failed');
        throw new CloudError(
          `node group ${pool.config.clusterName}/${pool.config.nodegroupName} still busy with another ` +
            `update after ${attempt} attempts (ResourceInUseException); desired size left at ${group.desiredSize}`,
          'UpdateNodegroupConfig',
          { cause: error },
        );
      }
      const delayMs = backoffDelay(attempt, pool.inUse, pool.ctx.random);
      pool.logger.warn({ event: 'resize.in-use', ...fields, attempt, delayMs }, 'node group busy, waiting');
      await pool.ctx.sleep(delayMs);
    }
  }
}
