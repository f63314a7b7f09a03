import {
  DescribeNodegroupCommand,
  DescribeUpdateCommand,
  type EKSClient,
  ListNodegroupsCommand,
  type Update,
  UpdateNodegroupConfigCommand,
} from '@aws-sdk/client-eks';
import type { Clock } from '../../service/ports.ts';
import { CloudError } from '../errors.ts';
import { backoffDelay, type RetryContext, type RetryPolicy } from '../retry.ts';
import { AwsCallError, withRetry } from './retry.ts';
import type { NodegroupRef } from './ec2-nodes.ts';

/** The EKS calls of the node pool, each retried on throttling and transient errors. */

export interface EksContext extends RetryContext {
  readonly eks: EKSClient;
  readonly clock: Clock;
}

export interface NodegroupScaling {
  readonly minSize: number;
  readonly maxSize: number;
  readonly desiredSize: number;
  /** The group's modifiedAt (ms) and desired size: which state a resize starts from (idempotency.ts). */
  readonly generation: string;
  readonly name: string;
  readonly arn: string | undefined;
  /** ACTIVE, DEGRADED, UPDATING, ... */
  readonly status: string | undefined;
  /** health.issues, e.g. AsgInstanceLaunchFailures with EC2's InsufficientInstanceCapacity message. */
  readonly issues: { code: string; message: string }[];
  /** resources.autoScalingGroups: the ASG whose instances boa terminates one by one. */
  readonly autoScalingGroup: string | undefined;
  readonly labels: Readonly<Record<string, string>>;
  /** The group's own AWS tags (not its instances'): which deployment made it (replaced-nodegroups.ts). */
  readonly tags: Readonly<Record<string, string>>;
  /** The types the group launches (none named when its launch template sets the type). */
  readonly instanceTypes: readonly string[];
}

export async function readNodegroup(ref: NodegroupRef, ctx: EksContext): Promise<NodegroupScaling> {
  const out = await withRetry(
    'DescribeNodegroup',
    () =>
      ctx.eks.send(
        new DescribeNodegroupCommand({ clusterName: ref.clusterName, nodegroupName: ref.nodegroupName }),
      ),
    ctx,
  );
  const scaling = out.nodegroup?.scalingConfig;
  const { minSize, maxSize, desiredSize } = scaling ?? {};
  if (minSize === undefined || maxSize === undefined || desiredSize === undefined) {
    throw new CloudError(
      `DescribeNodegroup of ${ref.clusterName}/${ref.nodegroupName} returned no complete scalingConfig ` +
        `(got ${JSON.stringify(scaling ?? null)}); a managed node group always has min, max and desired sizes`,
      'DescribeNodegroup',
    );
  }
  const group = out.nodegroup;
  const modifiedAt = group?.modifiedAt?.getTime() ?? 'unknown';
  return {
    minSize,
    maxSize,
    desiredSize,
    generation: `${modifiedAt}/${desiredSize}`,
    name: group?.nodegroupName ?? ref.nodegroupName,
    arn: group?.nodegroupArn,
    status: group?.status,
    issues: (group?.health?.issues ?? []).map((i) => ({
      code: i.code ?? 'Unknown',
      message: i.message ?? '',
    })),
    autoScalingGroup: group?.resources?.autoScalingGroups?.[0]?.name,
    labels: group?.labels ?? {},
    tags: group?.tags ?? {},
    instanceTypes: group?.instanceTypes ?? [],
  };
}

/** The cluster's node groups carrying all of `labels` (how a replaced group is found under its new name). */
export async function findNodegroupsByLabels(
  clusterName: string,
  labels: Readonly<Record<string, string>>,
  ctx: EksContext,
): Promise<string[]> {
  const groups = await describeClusterNodegroups(clusterName, ctx);
  return groups.filter((group) => hasLabels(group, labels)).map((group) => group.name);
}

export function hasLabels(group: NodegroupScaling, labels: Readonly<Record<string, string>>): boolean {
  return Object.entries(labels).every(([k, v]) => group.labels[k] === v);
}

/**
 * Every node group of the cluster as DescribeNodegroup reads it (ListNodegroups, all pages). A group
 * deleted between the two calls (CloudFormation's cleanup of a replaced one) is left out.
 */
export async function describeClusterNodegroups(
  clusterName: string,
  ctx: EksContext,
): Promise<NodegroupScaling[]> {
  const names: string[] = [];
  let nextToken: string | undefined;
  do {
    const page = await withRetry(
      'ListNodegroups',
      () => ctx.eks.send(new ListNodegroupsCommand({ clusterName, ...(nextToken ? { nextToken } : {}) })),
      ctx,
    );
    names.push(...(page.nodegroups ?? []));
    nextToken = page.nextToken;
  } while (nextToken);
  const groups: NodegroupScaling[] = [];
  for (const nodegroupName of names) {
    try {
      groups.push(await readNodegroup({ clusterName, nodegroupName }, ctx));
    } catch (error) {
      const cause = error instanceof AwsCallError ? (error.cause as Error | undefined) : undefined;
      if (cause?.name !== 'ResourceNotFoundException') throw error;
    }
  }
  return groups;
}

/**
 * Requests the new desired size, and only that: EKS documents that an update may give any or none of
 * minSize, maxSize and desiredSize, so the bounds (the deployment's) are never sent, not even unchanged.
 */
export async function requestDesiredSize(
  ref: NodegroupRef,
  desiredSize: number,
  clientRequestToken: string,
  ctx: EksContext,
): Promise<Update & { id: string }> {
  const out = await withRetry(
    'UpdateNodegroupConfig',
    () =>
      ctx.eks.send(
        new UpdateNodegroupConfigCommand({
          clusterName: ref.clusterName,
          nodegroupName: ref.nodegroupName,
          scalingConfig: { desiredSize },
          clientRequestToken,
        }),
      ),
    ctx,
  );
  const update = out.update;
  if (!update?.id)
    throw new CloudError('UpdateNodegroupConfig returned no update id', 'UpdateNodegroupConfig');
  return { ...update, id: update.id };
}

export interface UpdateOutcome {
  readonly id: string;
  readonly status: string;
  /** The update's errors as "code: message" lines, for a Failed update. */
  readonly errors: string[];
}

export async function readUpdate(
  ref: NodegroupRef,
  updateId: string,
  ctx: EksContext,
): Promise<UpdateOutcome> {
  const out = await withRetry(
    'DescribeUpdate',
    () =>
      ctx.eks.send(
        new DescribeUpdateCommand({ name: ref.clusterName, nodegroupName: ref.nodegroupName, updateId }),
      ),
    ctx,
  );
  const errors = (out.update?.errors ?? []).map(
    (e) => `${e.errorCode ?? 'Unknown'}: ${e.errorMessage ?? ''}`,
  );
  return { id: updateId, status: out.update?.status ?? 'Unknown', errors };
}

/** Polling DescribeUpdate: a scaling update usually ends within seconds (the ASG's desired is set). */
export const UPDATE_POLL: RetryPolicy = { maxAttempts: Infinity, baseDelayMs: 1_000, maxDelayMs: 15_000 };

/**
 * Polls DescribeUpdate until the update is no longer InProgress, for at most `waitMs`: then it answers
 * InProgress and the caller leaves the update in flight (an EKS update can stay InProgress for many
 * minutes, and nothing waits that long). `waitMs` 0 reads it once.
 */
export async function awaitUpdate(
  ref: NodegroupRef,
  updateId: string,
  ctx: EksContext,
  waitMs: number,
): Promise<UpdateOutcome> {
  const deadline = ctx.clock.now() + waitMs;
  for (let poll = 1; ; poll++) {
    const outcome = await readUpdate(ref, updateId, ctx);
    if (outcome.status !== 'InProgress' || ctx.clock.now() >= deadline) return outcome;
    const delayMs = Math.min(
      backoffDelay(poll, UPDATE_POLL, ctx.random),
      Math.max(0, deadline - ctx.clock.now()),
    );
    ctx.logger.debug({ event: 'update.poll', updateId, poll, delayMs }, 'update in progress');
    await ctx.sleep(delayMs);
  }
}
