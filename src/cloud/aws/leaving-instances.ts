import type { Logger } from 'pino';
import { type AsgContext, type AsgView, describeAsg, refused } from './asg.ts';

/**
 * The node group's instances the ASG is terminating, and those it counts in service, read at each
 * listing (asg.ts describeAsg); the same answer's suspended processes go to `onSuspended`
 * (az-rebalance.ts keeps AZRebalance among them).
 * Unreadable (an IAM refusal before the stack is redeployed, an Auto Scaling outage), the listing goes
 * on without them, as before the read existed: the ledger and placement must not stop for it. Logged
 * once until it reads again.
 */
export class LeavingInstances {
  /** Why the states could not be read, while they cannot. */
  private unread: string | undefined;

  constructor(private readonly logger: Logger) {}

  async read(
    autoScalingGroup: () => Promise<string | undefined>,
    ctx: () => AsgContext,
    onSuspended?: (group: string, suspended: readonly string[] | undefined) => Promise<unknown>,
  ): Promise<Pick<AsgView, 'leaving' | 'members' | 'outdated'>> {
    try {
      const group = await autoScalingGroup();
      if (!group) return { leaving: new Set(), members: undefined, outdated: new Set() };
      const { leaving, members, suspended, outdated } = await describeAsg(group, ctx());
      await onSuspended?.(group, suspended);
      if (this.unread !== undefined) {
        this.logger.info({ event: 'node.lifecycle-read' }, 'instance lifecycle states read again');
      }
      this.unread = undefined;
      return { leaving, members, outdated };
    } catch (error) {
      const message = (error as Error).message;
      if (this.unread === undefined) {
        this.logger.warn(
          {
            event: 'node.lifecycle-unreadable',
            error: message,
            ...(refused(error) ? { fix: 'redeploy the stack: autoscaling:DescribeAutoScalingGroups' } : {}),
          },
          "cannot read the group's instance lifecycle states; instances the group is terminating count as kept until it can",
        );
      }
      this.unread = message;
      return { leaving: new Set(), members: undefined, outdated: new Set() };
    }
  }
}
