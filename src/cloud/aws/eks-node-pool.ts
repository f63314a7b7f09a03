import type { EC2Client } from '@aws-sdk/client-ec2';
import type { EKSClient } from '@aws-sdk/client-eks';
import { pino, type Logger } from 'pino';
import type { Clock, NodeGroupState, NodePool, PoolNode, ResizeResult } from '../../service/ports.ts';
import { checkTarget, clampToBounds } from '../bounds.ts';
import { CloudError } from '../errors.ts';
import { AwsCallError, backoffDelay, DEFAULT_RETRY, type RetryPolicy } from '../retry.ts';
import { realSleep, type Sleep, systemClock } from '../time.ts';
import { listNodegroupInstances } from './ec2-nodes.ts';
import {
  awaitUpdate,
  type EksContext,
  readNodegroup,
  readUpdate,
  requestDesiredSize,
} from './eks-nodegroup.ts';
import { idempotencyToken } from './idempotency.ts';

export interface EksNodePoolConfig {
  readonly clusterName: string;
  readonly nodegroupName: string;
  /** For logs only: the clients carry their own region. */
  readonly region?: string;
  readonly gpusPerNode: number;
  /** The operator's cap on nodes (maxNodes), below the group's own maxSize. */
  readonly hardCap?: number;
  /** How long to wait for one EKS update to leave InProgress (default 10 minutes). */
  readonly updateTimeoutMs?: number;
  /** Throttling and transient errors (default DEFAULT_RETRY). */
  readonly retry?: RetryPolicy;
  /** While another update holds the group (ResourceInUseException): default 8 attempts, 5 s to 60 s apart. */
  readonly inUse?: RetryPolicy;
}

export interface EksNodePoolDeps {
  readonly eks: EKSClient;
  readonly ec2: EC2Client;
  readonly clock?: Clock;
  readonly sleep?: Sleep;
  readonly random?: () => number;
  readonly logger?: Logger;
}

const DEFAULT_IN_USE: RetryPolicy = { maxAttempts: 8, baseDelayMs: 5_000, maxDelayMs: 60_000 };

/**
 * An EKS managed node group as the service's node pool. Resizes set desiredSize only, clamped to the
 * group's bounds (read from DescribeNodegroup every time) and the hard cap; one update at a time (calls
 * are queued, and the pool's own unfinished update is waited for); each resize is followed to Successful
 * or Failed. Nodes come from EC2. Every decision is logged with its fields.
 */
export class EksNodePool implements NodePool {
  readonly kind = 'aws' as const;
  private readonly ctx: EksContext;
  private readonly logger: Logger;
  private readonly updateTimeoutMs: number;
  private readonly inUse: RetryPolicy;
  /** The pool's own update that may still be in progress (a resize that timed out waiting for it). */
  private pendingUpdateId: string | undefined;
  /** Resizes run one after another, so this pool never has two updates in flight. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly config: EksNodePoolConfig,
    private readonly deps: EksNodePoolDeps,
  ) {
    for (const key of ['clusterName', 'nodegroupName'] as const) {
      if (!config[key]) throw new RangeError(`EksNodePool: ${key} must be a non-empty string`);
    }
    if (!Number.isInteger(config.gpusPerNode) || config.gpusPerNode <= 0) {
      throw new RangeError(`EksNodePool: gpusPerNode must be a whole number > 0, got ${config.gpusPerNode}`);
    }
    if (config.hardCap !== undefined && !(Number.isInteger(config.hardCap) && config.hardCap >= 0)) {
      throw new RangeError(`EksNodePool: hardCap must be a whole number >= 0, got ${config.hardCap}`);
    }
    this.logger = (deps.logger ?? pino()).child({
      component: 'eks-node-pool',
      cluster: config.clusterName,
      nodegroup: config.nodegroupName,
      ...(config.region ? { region: config.region } : {}),
    });
    this.ctx = {
      eks: deps.eks,
      clock: deps.clock ?? systemClock,
      sleep: deps.sleep ?? realSleep,
      random: deps.random ?? Math.random,
      logger: this.logger,
      policy: config.retry ?? DEFAULT_RETRY,
    };
    this.updateTimeoutMs = config.updateTimeoutMs ?? 600_000;
    this.inUse = config.inUse ?? DEFAULT_IN_USE;
  }

  async describe(): Promise<NodeGroupState> {
    const group = await readNodegroup(this.config, this.ctx);
    const updateInFlight = await this.pendingUpdateStillRunning();
    return {
      minSize: group.minSize,
      maxSize: group.maxSize,
      desiredSize: group.desiredSize,
      ...(updateInFlight ? { updateInFlight } : {}),
    };
  }

  async setDesiredSize(target: number): Promise<ResizeResult> {
    checkTarget(target);
    const run = this.queue.then(() => this.resize(target));
    this.queue = run.catch(() => undefined);
    return run;
  }

  listNodes(): Promise<PoolNode[]> {
    return listNodegroupInstances(this.deps.ec2, this.config, this.config.gpusPerNode, this.ctx);
  }

  private async resize(target: number): Promise<ResizeResult> {
    this.logger.info({ event: 'resize.requested', target }, 'resize requested');
    await this.settlePendingUpdate();
    for (let attempt = 1; ; attempt++) {
      // Re-read every attempt: whoever held the group may have changed its bounds or desired size.
      const group = await readNodegroup(this.config, this.ctx);
      const { requested, clampedBy } = clampToBounds(target, group, this.config.hardCap);
      const fields = {
        target,
        requested,
        desiredSize: group.desiredSize,
        minSize: group.minSize,
        maxSize: group.maxSize,
        hardCap: this.config.hardCap,
      };
      if (clampedBy) this.logger.info({ event: 'resize.clamped', ...fields, clampedBy }, 'resize clamped');
      if (requested === group.desiredSize) {
        this.logger.info({ event: 'resize.skipped', ...fields, reason: 'unchanged' }, 'resize skipped');
        return { requested };
      }
      // The attempt is part of the generation: a request refused as in-use applied nothing, so its
      // successor may not be answered from it; retries of one attempt (throttling, timeouts) share a token.
      const generation = `${group.generation}#${attempt}`;
      const token = idempotencyToken({ ...this.config, desiredSize: requested, generation });
      try {
        const update = await requestDesiredSize(this.config, requested, token, this.ctx);
        this.pendingUpdateId = update.id;
        this.logger.info({ event: 'resize.issued', ...fields, updateId: update.id, token }, 'resize issued');
        await this.finishUpdate(update.id, fields);
        return { requested, updateId: update.id };
      } catch (error) {
        if (!(error instanceof AwsCallError && error.kind === 'in-use')) {
          this.logger.error(
            { event: 'resize.failed', ...fields, error: (error as Error).message },
            'resize failed',
          );
          throw error;
        }
        if (attempt >= this.inUse.maxAttempts) {
          this.logger.error(
            { event: 'resize.failed', ...fields, attempt, reason: 'in-use' },
            'resize failed',
          );
          throw new CloudError(
            `node group ${this.config.clusterName}/${this.config.nodegroupName} still busy with another ` +
              `update after ${attempt} attempts (ResourceInUseException); desired size left at ${group.desiredSize}`,
            'UpdateNodegroupConfig',
            { cause: error },
          );
        }
        const delayMs = backoffDelay(attempt, this.inUse, this.ctx.random);
        this.logger.warn({ event: 'resize.in-use', ...fields, attempt, delayMs }, 'node group busy, waiting');
        await this.ctx.sleep(delayMs);
      }
    }
  }

  /** Follows an update to its end; a Failed or Cancelled one is an error carrying EKS's own errors. */
  private async finishUpdate(updateId: string, fields: Record<string, unknown>): Promise<void> {
    const outcome = await awaitUpdate(this.config, updateId, this.ctx, this.updateTimeoutMs);
    this.pendingUpdateId = undefined;
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

  /** Waits for the pool's own earlier update, if one may still be running, before issuing another. */
  private async settlePendingUpdate(): Promise<void> {
    const updateId = this.pendingUpdateId;
    if (!updateId) return;
    this.logger.info({ event: 'resize.waiting', updateId }, 'waiting for the previous update');
    const outcome = await awaitUpdate(this.config, updateId, this.ctx, this.updateTimeoutMs);
    this.pendingUpdateId = undefined;
    const level = outcome.status === 'Successful' ? 'info' : 'warn';
    this.logger[level]({ event: 'update.settled', updateId, status: outcome.status, errors: outcome.errors });
  }

  private async pendingUpdateStillRunning(): Promise<string | undefined> {
    const updateId = this.pendingUpdateId;
    if (!updateId) return undefined;
    const { status } = await readUpdate(this.config, updateId, this.ctx);
    return status === 'InProgress' ? updateId : undefined;
  }
}
