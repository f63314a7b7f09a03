import type { Logger } from 'pino';
import type { NodeGroupState } from '../../service/ports.ts';
import { type AsgContext, recentLaunchFailures, refused } from './asg.ts';

/**
 * The group's failed launches of the last window (the capacity backoff's input): a read beside the
 * group's, not part of it. Unreadable (Auto Scaling throttled past the retries, an outage, a refusal),
 * describe() answers without them, logged once until they read again. Before, describe() failed with
 * it: each tick kept the last group it had, or none after a start, so no pass resized or removed a
 * node while Auto Scaling's Describe calls (a per-account quota Cluster Autoscaler shares) were
 * throttled (found in review).
 */
export class LaunchFailuresRead {
  /** The last read of the launch failures failed (logged once until one reads again). */
  private unread = false;

  constructor(private readonly logger: Logger) {}

  async read(
    autoScalingGroup: string,
    since: number,
    ctx: AsgContext,
  ): Promise<NodeGroupState['launchFailures']> {
    try {
      const failures = await recentLaunchFailures(autoScalingGroup, since, ctx);
      if (this.unread) {
        this.logger.info({ event: 'nodes.launch-failures-read' }, 'launch failures read again');
      }
      this.unread = false;
      return failures;
    } catch (error) {
      if (!this.unread) {
        this.logger.warn(
          {
            event: 'nodes.launch-failures-unreadable',
            error: (error as Error).message,
            ...(refused(error) ? { fix: 'redeploy the stack: autoscaling:DescribeScalingActivities' } : {}),
          },
          "cannot read the group's scaling activities; launch failures are not seen (no capacity backoff) until they can",
        );
      }
      this.unread = true;
      return [];
    }
  }
}
