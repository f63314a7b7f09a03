import type { Logger } from 'pino';
import type { PoolNode } from '../../service/ports.ts';

/**
 * EC2 running instances with the group's tags that do not count in its ASG (DetachInstances or
 * EnterStandby by hand, to debug a node, say) are leaving too: paid while they run, but not the
 * group's capacity, so they are neither kept nor chosen, and nothing is placed there. Logged once each,
 * with what to do. Counted as kept (found in review), such a node left the group one short of boa's
 * count: boa raised the size, found a node too many, terminated the new one, and did so again every
 * other tick. A pending instance is left alone: the ASG may not list its own launch yet.
 */
export class InstancesNotInGroup {
  /** Instances listed with the group's tags that its ASG did not have at the last listing (logged once). */
  private notInGroup = new Set<string>();

  constructor(private readonly logger: Logger) {}

  /** Adds to `leaving` the ready instances of `listed` that `members` (the ASG's) lacks. */
  mark(
    listed: readonly PoolNode[],
    members: Set<string> | undefined,
    leaving: Set<string>,
    autoScalingGroup: string | undefined,
  ): void {
    if (!members) return;
    const outside = new Set<string>();
    for (const node of listed) {
      if (!node.ready || members.has(node.id)) continue;
      outside.add(node.id);
      leaving.add(node.id);
      if (this.notInGroup.has(node.id)) continue;
      this.logger.warn(
        { event: 'node.not-in-group', instanceId: node.id, autoScalingGroup },
        "an instance with the node group's tags is not in service in its Auto Scaling group (detached or " +
          'in Standby by hand?): boa neither uses nor removes it, and it is paid while it runs: terminate ' +
          'it, or attach it back (exit Standby)',
      );
    }
    this.notInGroup = outside;
  }
}
