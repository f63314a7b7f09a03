import type { Logger } from 'pino';
import type { Clock, FollowedGroups, GroupRecord, PoolNode } from '../../service/ports.ts';
import { instanceTypeFacts } from '../../core/instance-types.ts';
import type { ListedInstance } from './ec2-nodes.ts';

type Replaced = FollowedGroups['replaced'][number];

/**
 * The node groups an EksNodePool followed before the one it follows now, while their instances run.
 * CloudFormation replaces a group (an instance-type change) by creating the new one, pointing boa at it
 * (a restart under the new name) and deleting the old one only in its cleanup phase; until then the
 * old nodes are paid. Listed by the pool's one DescribeInstances call (their names beside the group's),
 * they count as paid and within the spend ceiling; boa never terminates or resizes them (the group is
 * CloudFormation's to delete, and its instances not in the new group's Auto Scaling group). Kept in the
 * service's store (followGroups), so a restart of boa, the one CloudFormation makes included, knows
 * them; a group is forgotten once a listing that asked for it finds none of its instances.
 */
export class ReplacedNodegroups {
  private groups: FollowedGroups = { replaced: [] };
  private store: ((groups: FollowedGroups) => void) | undefined;
  /** The group was read (DescribeNodegroup) in this run. */
  private read = false;
  /** Nothing was stored (leftover-nodegroups.ts): the cluster's groups are searched once for a replaced one. */
  private searching = false;
  /** Replaced instances' types of unknown GPUs, said once each (node). */
  private readonly unknownTypes = new Set<string>();

  constructor(
    private readonly logger: Logger,
    private readonly clock: Clock,
  ) {}

  /**
   * What a previous run stored; the ARN to compare the group with, when it ran under the configured
   * name. Under another (CloudFormation pointed boa at a new group, or rolled back to the old one; or
   * boa had followed the group by its labels), the first read of the group settles it (unsettled).
   */
  resume(
    stored: FollowedGroups | undefined,
    store: (groups: FollowedGroups) => void,
    configured: string,
  ): string | undefined {
    this.store = store;
    this.searching = stored?.current === undefined;
    this.groups = {
      ...(stored?.current ? { current: stored.current } : {}),
      replaced: stored?.replaced ?? [],
    };
    return stored?.current?.name === configured ? stored.current.arn : undefined;
  }

  /**
   * A group is stored and this run has not read the group yet: the read says whether it was replaced (a
   * new name, or a new ARN under the same name) before a listing takes its nodes for the new group's.
   */
  unsettled(): boolean {
    return (this.groups.current !== undefined && !this.read) || this.searching;
  }

  /** Nothing stored, and the cluster's groups not searched yet for one this group replaced. */
  searchPending(): boolean {
    return this.searching;
  }

  /**
   * The cluster's groups searched (with nothing stored): those `leftoverGroups` takes for replaced ones
   * are followed like a group this pool followed before, from the listing that comes next; one with no
   * instance listed is forgotten at once. `undefined`: the search was refused (IAM), given up.
   */
  searched(found: readonly GroupRecord[] | undefined): void {
    this.searching = false;
    const fresh = (found ?? []).filter((group) => !this.groups.replaced.some((r) => sameGroup(r, group)));
    if (fresh.length === 0) return;
    for (const group of fresh) {
      this.logger.warn(
        { event: 'nodegroup.replaced-found', nodegroup: group.name, arn: group.arn },
        'a node group of this deployment beside the one configured, and none stored (the first run of ' +
          "this version): taken for a replaced one, its nodes count as paid (within the budget's " +
          'ceiling) until they are gone; nothing new is placed on them',
      );
    }
    const since = this.clock.now();
    this.keep({
      ...this.groups,
      replaced: [...this.groups.replaced, ...fresh.map((g) => ({ ...g, since }))],
    });
  }

  /** The group as DescribeNodegroup found it: one with another name or ARN than the last replaced it. */
  seen(group: GroupRecord): void {
    this.read = true;
    const last = this.groups.current;
    const same = last !== undefined && sameGroup(last, group);
    if (same && last.arn === group.arn && last.autoScalingGroup === group.autoScalingGroup) return;
    if (!same && last) {
      this.logger.warn(
        { event: 'nodegroup.replaced-nodes', from: last.name, fromArn: last.arn, to: group.name },
        "node group replaced: the old group's nodes count as paid (within the budget's ceiling) until they " +
          'are gone; nothing new is placed on them',
      );
    }
    // The group followed again (a rollback) is no replaced one; nor is one recorded twice.
    const replaced = this.groups.replaced.filter(
      (r) => !sameGroup(r, group) && !(last && sameGroup(r, last)),
    );
    if (!same && last) replaced.push({ ...last, since: this.clock.now() });
    this.keep({ current: group, replaced });
  }

  /** The replaced groups' names, for the listing (nodegroupFilters' alsoGroups). */
  names(): string[] {
    return [...new Set(this.groups.replaced.map((r) => r.name))];
  }

  /** The replaced groups a listing starting now asks for. */
  asked(): readonly Replaced[] {
    return this.groups.replaced;
  }

  /**
   * The listed instances of replaced groups, by id, with the group's name; the groups `asked` of which
   * none is listed any more are forgotten (stored).
   */
  sort(listed: readonly ListedInstance[], asked: readonly Replaced[], current: string): Map<string, string> {
    const of = new Map<string, string>();
    const found = new Set<Replaced>();
    for (const instance of listed) {
      const group = this.groups.replaced.find(
        (r) =>
          instance.nodegroup === r.name &&
          // Under the current group's name, only its own Auto Scaling group tells an old instance apart.
          (r.name !== current ||
            (r.autoScalingGroup !== undefined && instance.autoScalingGroup === r.autoScalingGroup)),
      );
      if (!group) continue;
      of.set(instance.id, group.name);
      found.add(group);
    }
    const gone = asked.filter((r) => !found.has(r) && this.groups.replaced.includes(r));
    if (gone.length > 0) {
      for (const r of gone) {
        this.logger.info(
          { event: 'nodegroup.replaced-gone', nodegroup: r.name, arn: r.arn },
          "the replaced node group's nodes are gone; no longer counted",
        );
      }
      this.keep({ ...this.groups, replaced: this.groups.replaced.filter((r) => !gone.includes(r)) });
    }
    return of;
  }

  /**
   * A replaced group's instance as a node, with its own type's GPUs (replacedInstanceGpus): paid and
   * charged as what it is. A type boa does not know keeps the configured GPUs, said once per type.
   */
  node(instance: ListedInstance, gpusPerNode: number): PoolNode {
    const gpus = replacedInstanceGpus(instance);
    const type = instance.instanceType ?? '(none named)';
    if (gpus === undefined && !this.unknownTypes.has(type)) {
      this.unknownTypes.add(type);
      this.logger.warn(
        { event: 'nodegroup.replaced-type-unknown', instanceType: type, gpusPerNode },
        `a replaced group's instance type ${type} is not one boa knows the GPUs of: its nodes count as ` +
          `${gpusPerNode} GPUs each (the configured type's) until they are gone`,
      );
    }
    return { ...plain(instance), gpus: gpus ?? gpusPerNode };
  }

  private keep(groups: FollowedGroups): void {
    this.store?.(groups);
    this.groups = groups;
  }
}

/** The same group: the same name, and the same ARN where both are known. */
function sameGroup(a: GroupRecord, b: GroupRecord): boolean {
  return a.name === b.name && (a.arn === undefined || b.arn === undefined || a.arn === b.arn);
}

/** A node of a replaced group as listed: on its way out, its jobs kept while it is ready. */
export function outgoing(node: PoolNode, group: string): PoolNode {
  return node.ready
    ? { ...node, leaving: true, keepOnly: true, replacedGroup: group }
    : { ...node, leaving: true, replacedGroup: group, waitingFor: 'leaving' };
}

/** A listed instance as a node: the groups its tags name told replaced nodes apart, and are dropped. */
export function plain(instance: ListedInstance): PoolNode {
  const {
    nodegroup: _nodegroup,
    autoScalingGroup: _autoScalingGroup,
    instanceType: _instanceType,
    ...node
  } = instance;
  return node;
}

/**
 * The GPUs a replaced group's instance has: its own type's, not the configured type's. The replacement
 * is an instance-type change, so the two differ as a rule: counted at the new type's GPUs, 4-GPU nodes
 * replaced by 1-GPU ones were paid 4 GPUs and charged 1, and boa filled the new group as if the old
 * nodes took a quarter of the budget (found in an operator review). A type boa does not know (not in
 * src/core/instance-types.ts) counts as the configured one's: undefined, for the caller to say so.
 */
export function replacedInstanceGpus(instance: ListedInstance): number | undefined {
  return instance.instanceType ? instanceTypeFacts(instance.instanceType)?.gpus : undefined;
}
