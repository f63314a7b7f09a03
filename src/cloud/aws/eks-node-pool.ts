import type { AutoScalingClient } from '@aws-sdk/client-auto-scaling';
import type { EC2Client } from '@aws-sdk/client-ec2';
import type { EKSClient } from '@aws-sdk/client-eks';
import { pino, type Logger } from 'pino';
import type {
  Clock,
  FollowedGroups,
  GroupChanges,
  NodeGroupState,
  NodePool,
  PoolNode,
  ResizeResult,
  TerminateResult,
} from '../../service/ports.ts';
import { checkTarget } from '../bounds.ts';
import { CloudError } from '../errors.ts';
import { DEFAULT_RETRY, type RetryPolicy } from '../retry.ts';
import { AwsCallError } from './retry.ts';
import { realSleep, type Sleep, systemClock } from '../time.ts';
import { type AsgContext, type AsgView, protectInstances, terminateInstances } from './asg.ts';
import { instancesLaunchedSince } from './asg-launches.ts';
import { AzRebalanceHold } from './az-rebalance.ts';
import { LaunchFailuresRead } from './launch-failures-read.ts';
import { LeavingInstances } from './leaving-instances.ts';
import { InstancesNotInGroup } from './not-in-group.ts';
import type { ClusterNodes } from './cluster-nodes.ts';
import { listNodegroupInstances, type NodegroupRef } from './ec2-nodes.ts';
import {
  type EksContext,
  findNodegroupsByLabels,
  type NodegroupScaling,
  readNodegroup,
} from './eks-nodegroup.ts';
import { OwnEksUpdate } from './eks-own-update.ts';
import { DEFAULT_IN_USE, DEFAULT_LABELS, type EksNodePoolConfig } from './eks-pool-config.ts';
import { joinClusterNodes } from './eks-pool-nodes.ts';
import { setCordoned } from './eks-cordon.ts';
import { resizeNodegroup } from './eks-resize.ts';
import { findLeftoverGroups } from './leftover-nodegroups.ts';
import { InstanceTypeCheck, TYPE_MISMATCH_ISSUE } from './instance-type-check.ts';
import { outgoing, ReplacedNodegroups } from './replaced-nodegroups.ts';

export type { EksNodePoolConfig } from './eks-pool-config.ts';

export interface EksNodePoolDeps {
  readonly eks: EKSClient;
  readonly ec2: EC2Client;
  /** For terminating chosen instances and scale-in protection; without it, terminate() and protect() fail. */
  readonly autoscaling?: AutoScalingClient;
  /** Kubernetes' view of the nodes; without it a node is ready once EC2 says running. */
  readonly nodes?: ClusterNodes;
  readonly clock?: Clock;
  readonly sleep?: Sleep;
  readonly random?: () => number;
  readonly logger?: Logger;
}

/**
 * An EKS managed node group as the service's node pool. Resizes set desiredSize only, clamped to the
 * group's bounds (read from DescribeNodegroup every time) and the hard cap; one update at a time (calls
 * are queued, and none is sent while the pool's own update is InProgress); each resize is followed to
 * Successful or Failed for `updateWaitMs`, then left in flight for describe() to follow, one
 * DescribeUpdate a call. Nodes come from EC2. Every decision is logged with its fields.
 */
export class EksNodePool implements NodePool {
  readonly kind = 'aws' as const;
  private readonly ctx: EksContext;
  private readonly logger: Logger;
  private readonly inUse: RetryPolicy;
  /** The pool's own update that may still be in progress (a resize left it in flight). */
  private readonly ownUpdate: OwnEksUpdate;
  /** Resizes run one after another, so this pool never has two updates in flight. */
  private queue: Promise<unknown> = Promise.resolve();
  /** The group as last found: its name changes when it is replaced (see labels). */
  private ref: NodegroupRef;
  private arn: string | undefined;
  private autoScalingGroup: string | undefined;
  /** Kubernetes node name of each instance, from the last listing. */
  private names = new Map<string, string>();
  private readonly leaving: LeavingInstances;
  /** AZRebalance kept suspended on the group's ASG (az-rebalance.ts). */
  private readonly rebalance: AzRebalanceHold;
  /** Instances with the group's tags its ASG does not count in service (not-in-group.ts). */
  private readonly notInGroup: InstancesNotInGroup;
  private readonly launchFailureRead: LaunchFailuresRead;
  /** Groups this pool followed before, while their nodes run (paid): replaced-nodegroups.ts. */
  private readonly replaced: ReplacedNodegroups;
  /** The group's instance types against the configured one (instance-type-check.ts). */
  private readonly types: InstanceTypeCheck;

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
    this.inUse = config.inUse ?? DEFAULT_IN_USE;
    this.ref = { clusterName: config.clusterName, nodegroupName: config.nodegroupName };
    const waitMs = config.updateWaitMs ?? 30_000;
    this.ownUpdate = new OwnEksUpdate(this.ctx, this.logger, waitMs, () => this.ref);
    this.leaving = new LeavingInstances(this.logger);
    this.rebalance = new AzRebalanceHold(this.logger);
    this.notInGroup = new InstancesNotInGroup(this.logger);
    this.launchFailureRead = new LaunchFailuresRead(this.logger);
    this.replaced = new ReplacedNodegroups(this.logger, this.ctx.clock);
    this.types = new InstanceTypeCheck(this.logger, config.gpusPerNode, config.instanceType);
  }

  followGroups(stored: FollowedGroups | undefined, store: (groups: FollowedGroups) => void): void {
    this.arn = this.replaced.resume(stored, store, this.ref.nodegroupName);
  }

  async describe(): Promise<NodeGroupState> {
    const group = await this.readGroup();
    const updateInFlight = await this.ownUpdate.stillRunning();
    const launchFailures = await this.launchFailures(group.autoScalingGroup);
    const mismatch = this.types.mismatch();
    const gpusPerNode = this.types.knownGpus();
    return {
      minSize: group.minSize,
      maxSize: group.maxSize,
      desiredSize: group.desiredSize,
      ...(updateInFlight ? { updateInFlight } : {}),
      name: group.name,
      ...(group.arn ? { arn: group.arn } : {}),
      ...(group.status ? { status: group.status } : {}),
      issues: mismatch ? [...group.issues, { code: TYPE_MISMATCH_ISSUE, message: mismatch }] : group.issues,
      ...(mismatch ? { refusesRaises: mismatch } : {}),
      ...(gpusPerNode !== undefined ? { gpusPerNode } : {}),
      launchFailures,
    };
  }

  /** The group's failed launches of the last window (launch-failures-read.ts). */
  private async launchFailures(
    autoScalingGroup: string | undefined,
  ): Promise<NodeGroupState['launchFailures']> {
    if (!autoScalingGroup || !this.deps.autoscaling) return [];
    const since = this.ctx.clock.now() - (this.config.launchFailureWindowMs ?? 15 * 60_000);
    return this.launchFailureRead.read(autoScalingGroup, since, this.asgContext());
  }

  /**
   * DescribeNodegroup of the group as last found. A group replaced under a new name (ResourceNotFound)
   * is found again by its labels; one replaced under the same name shows a new ARN. Either is logged and
   * followed: instances, resizes and terminations go to the new group from then on.
   */
  private async readGroup(): Promise<NodegroupScaling> {
    let group: NodegroupScaling;
    try {
      group = await readNodegroup(this.ref, this.ctx);
    } catch (error) {
      const cause = error instanceof AwsCallError ? (error.cause as Error | undefined) : undefined;
      if (cause?.name !== 'ResourceNotFoundException') throw error;
      const labels = this.config.labels ?? DEFAULT_LABELS;
      const found = await findNodegroupsByLabels(this.ref.clusterName, labels, this.ctx);
      if (found.length !== 1) {
        throw new CloudError(
          `node group ${this.ref.clusterName}/${this.ref.nodegroupName} no longer exists and ` +
            `${found.length} node groups carry the labels ${JSON.stringify(labels)} ` +
            `(${found.join(', ') || 'none'}); exactly one is needed to follow it`,
          'DescribeNodegroup',
          { cause: error },
        );
      }
      this.ref = { clusterName: this.ref.clusterName, nodegroupName: found[0] as string };
      group = await readNodegroup(this.ref, this.ctx);
    }
    if (this.arn !== undefined && group.arn !== undefined && group.arn !== this.arn) {
      this.logger.warn(
        { event: 'nodegroup.replaced', from: this.arn, to: group.arn, nodegroup: group.name },
        'node group replaced; following the new one',
      );
      this.ownUpdate.forget();
    }
    this.arn = group.arn ?? this.arn;
    this.autoScalingGroup = group.autoScalingGroup;
    this.types.group(group.instanceTypes);
    this.replaced.seen({
      name: group.name,
      ...(this.arn ? { arn: this.arn } : {}),
      ...(group.autoScalingGroup ? { autoScalingGroup: group.autoScalingGroup } : {}),
    });
    if (this.replaced.searchPending()) {
      const labels = this.config.labels ?? DEFAULT_LABELS;
      this.replaced.searched(await findLeftoverGroups(group, this.ref.clusterName, labels, this.ctx));
    }
    return group;
  }

  private asgContext(): AsgContext {
    const autoscaling = this.deps.autoscaling;
    if (!autoscaling) {
      throw new CloudError('EksNodePool has no Auto Scaling client (deps.autoscaling)', 'AutoScaling');
    }
    return { ...this.ctx, autoscaling };
  }

  /**
   * The group's instances in a Terminating lifecycle state; none without an Auto Scaling client. The same
   * read keeps AZRebalance suspended (level-triggered: a new ASG or a hand-made resume is caught here).
   */
  private leavingInstances(): Promise<Pick<AsgView, 'leaving' | 'members' | 'outdated'>> {
    if (!this.deps.autoscaling)
      return Promise.resolve({ leaving: new Set(), members: undefined, outdated: new Set() });
    return this.leaving.read(
      async () => this.autoScalingGroup ?? (await this.readGroup()).autoScalingGroup,
      () => this.asgContext(),
      (group, suspended) => this.rebalance.keep(group, suspended, this.asgContext()),
    );
  }

  async setDesiredSize(target: number): Promise<ResizeResult> {
    checkTarget(target);
    const run = this.queue.then(() => this.resize(target));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * The group's EC2 instances joined to their Kubernetes nodes by spec.providerID. Billing starts at EC2
   * running; a node is ready for jobs only when Kubernetes has it Ready, not cordoned, with its GPUs
   * advertised (without a Kubernetes view, at EC2 running).
   */
  async listNodes(): Promise<PoolNode[]> {
    // After a restart (under a new name: CloudFormation's, on a replacement), the group is read first: a
    // replaced one's nodes must be in the first listing, or its tick fills the new group to the ceiling.
    // With nothing stored, the same read searches the cluster for a group it replaced.
    if (this.replaced.unsettled()) await this.readGroup();
    const asked = this.replaced.asked();
    const all = await listNodegroupInstances(
      this.deps.ec2,
      this.ref,
      this.config.gpusPerNode,
      this.ctx,
      this.replaced.names(),
    );
    const replacedOf = this.replaced.sort(all, asked, this.ref.nodegroupName);
    // Each at its own type's GPUs: the ledger charges what EC2 bills (instance-type-check.ts).
    const listed = all.map((instance) =>
      replacedOf.has(instance.id)
        ? this.replaced.node(instance, this.config.gpusPerNode)
        : this.types.node(instance),
    );
    this.types.listed(all.filter((instance) => !replacedOf.has(instance.id)));
    // In Terminating:Wait an instance is still EC2 running and paid, but the group's no more: nothing is
    // placed there and it is not counted as kept.
    const { leaving, members, outdated } = await this.leavingInstances();
    // Instances the ASG does not count in service are leaving too (not-in-group.ts).
    this.notInGroup.mark(
      listed.filter((n) => !replacedOf.has(n.id)),
      members,
      leaving,
      this.autoScalingGroup,
    );
    const nodes = await joinClusterNodes(listed, leaving, this.deps.nodes, (names) => {
      this.names = names;
    });
    return nodes.map((n) => {
      const group = replacedOf.get(n.id);
      return group ? outgoing(n, group) : outdated.has(n.id) ? { ...n, outdated: true } : n;
    });
  }

  /** The group's launches and ended terminations since `since`, from its activities (asg-launches.ts). */
  async launchedSince(since: number): Promise<GroupChanges> {
    const group = this.autoScalingGroup ?? (await this.readGroup()).autoScalingGroup;
    if (!group || !this.deps.autoscaling) return { launched: [], gone: new Map() };
    const { instances, gone, truncated } = await instancesLaunchedSince(group, since, this.asgContext());
    if (truncated) {
      this.logger.warn(
        { event: 'node.launches-truncated', since },
        'more scaling activities since the last listing than are read; older launches are not charged',
      );
    }
    // At the group's type's GPUs, not the configured ones (instance-type-check.ts launchGpus).
    const gpus = this.types.launchGpus();
    return { launched: instances.map((i) => ({ ...i, gpus })), gone };
  }

  /** Cordons the instances' Kubernetes nodes (eks-cordon.ts). */
  async cordon(nodeIds: readonly string[]): Promise<void> {
    await setCordoned(this.deps.nodes, this.names, nodeIds, true, this.logger);
  }

  /** Opens the instances' Kubernetes nodes to jobs again (a removal called off). */
  async uncordon(nodeIds: readonly string[]): Promise<void> {
    await setCordoned(this.deps.nodes, this.names, nodeIds, false, this.logger);
  }

  /**
   * AZRebalance is made sure to be suspended first (read now): a termination that lowers the desired
   * capacity could otherwise make the group launch a node and drain another. When it cannot be, the
   * termination is still sent (logged with the fix): a node kept would be paid with no limit.
   */
  async terminate(nodeIds: readonly string[]): Promise<TerminateResult> {
    const ctx = this.asgContext();
    if (nodeIds.length === 0) return { terminated: [], alreadyGone: [] };
    const group = this.autoScalingGroup ?? (await this.readGroup()).autoScalingGroup;
    if (!group)
      throw new CloudError(
        'DescribeNodegroup named no Auto Scaling group',
        'TerminateInstanceInAutoScalingGroup',
      );
    await this.rebalance.ensure(group, ctx);
    return terminateInstances(nodeIds, ctx);
  }

  async protect(nodeIds: readonly string[], protect: boolean): Promise<void> {
    if (nodeIds.length === 0) return;
    const group = this.autoScalingGroup ?? (await this.readGroup()).autoScalingGroup;
    if (!group)
      throw new CloudError('DescribeNodegroup named no Auto Scaling group', 'SetInstanceProtection');
    await protectInstances(group, nodeIds, protect, this.asgContext());
    this.logger.info({ event: 'node.protection', instanceIds: nodeIds, protect }, 'scale-in protection set');
  }

  private resize(target: number): Promise<ResizeResult> {
    return resizeNodegroup(target, {
      config: this.config,
      ctx: this.ctx,
      logger: this.logger,
      inUse: this.inUse,
      ownUpdate: this.ownUpdate,
      ref: () => this.ref,
      readGroup: () => this.readGroup(),
      refuseRaise: () => this.types.mismatch(),
    });
  }

  adoptUpdate(updateId: string): void {
    this.ownUpdate.adopt(updateId);
  }
}
