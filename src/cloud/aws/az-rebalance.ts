import type { Logger } from 'pino';
import { type AsgContext, describeAsg, refused, suspendProcesses } from './asg.ts';

export const AZ_REBALANCE = 'AZRebalance';

/**
 * Keeps AZRebalance suspended on the node group's Auto Scaling group. boa terminates the nodes it chose
 * with the desired capacity lowered; AWS's TerminateInstanceInAutoScalingGroup reference warns that this
 * can leave the zones unbalanced, and AZRebalance then launches a node (up to 10% or one above maxSize)
 * and terminates another by its own policy, busy or not (found in review). EKS does not suspend it, and
 * a new ASG (the node group replaced) or a hand-made ResumeProcesses brings it back: so it is checked
 * whenever the group is described (each listing) and before every termination boa decides.
 */
export class AzRebalanceHold {
  /** Why it could not be suspended, while it cannot: logged once until it can. */
  private failing: string | undefined;

  constructor(private readonly logger: Logger) {}

  /**
   * From a DescribeAutoScalingGroups answer (the processes it lists): suspends AZRebalance when it is not.
   * Never throws (the listing goes on); true when it is suspended now.
   */
  async keep(group: string, suspended: readonly string[] | undefined, ctx: AsgContext): Promise<boolean> {
    if (suspended?.includes(AZ_REBALANCE)) return this.held();
    try {
      await suspendProcesses(group, [AZ_REBALANCE], ctx);
    } catch (error) {
      this.failed(group, error as Error);
      return false;
    }
    this.failing = undefined;
    this.logger.warn(
      {
        event: 'nodegroup.az-rebalance-suspended',
        autoScalingGroup: group,
        suspendedBefore: suspended ?? [],
      },
      "AZRebalance was active on the node group; suspended, so that boa's scale-in terminations do not make the group launch and drain nodes of its own",
    );
    return true;
  }

  /**
   * Before a termination that lowers the desired capacity: the group read now, AZRebalance suspended if
   * it is not. Never throws: when it cannot be, the termination goes on anyway (found in review: blocking
   * it on an old stack without SuspendProcesses stopped every scale-in and provision-timeout removal, so
   * spend had no limit until a redeploy). The budget wins over the rebalance risk: a node launched for a
   * while, a busy one drained and its job restarted from its checkpoint. Logged once per occurrence.
   */
  async ensure(group: string, ctx: AsgContext): Promise<boolean> {
    let suspended: readonly string[] | undefined;
    try {
      suspended = (await describeAsg(group, ctx)).suspended;
    } catch (error) {
      this.failed(group, error as Error);
      return false;
    }
    return this.keep(group, suspended, ctx);
  }

  private held(): boolean {
    if (this.failing !== undefined) {
      this.failing = undefined;
      this.logger.info({ event: 'nodegroup.az-rebalance-held' }, 'AZRebalance is suspended again');
    }
    return true;
  }

  private failed(group: string, error: Error): void {
    if (this.failing === undefined) {
      this.logger.warn(
        {
          event: 'nodegroup.az-rebalance-unsuspended',
          autoScalingGroup: group,
          error: error.message,
          ...(refused(error) ? { fix: 'redeploy the stack: autoscaling:SuspendProcesses' } : {}),
        },
        "cannot suspend AZRebalance on the node group; boa's removals still terminate with the desired size lowered (the budget first), and the group may launch a node and drain another to even its zones until it is suspended",
      );
    }
    this.failing = error.message;
  }
}
