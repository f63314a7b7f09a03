import { type Activity, DescribeScalingActivitiesCommand } from '@aws-sdk/client-auto-scaling';
import type { AsgContext } from './asg.ts';
import { withRetry } from './retry.ts';

/** Activities per page (the API's maximum) and pages per read: 500 activities, a bounded look back. */
const PAGE_SIZE = 100;
const MAX_PAGES = 5;

/** An activity's status once it has ended; any other (InProgress, MidLifecycleAction, ...) is under way. */
const ENDED = new Set(['Successful', 'Failed', 'Cancelled']);

/**
 * The group's scaling activities that started since `since` (ms), newest first as the ASG answers
 * them, read page by page until an ended one older than `since`. The ASG lists the activities still
 * under way first, however old (a termination a lifecycle hook holds for an hour): one of those is no
 * sign the rest are older. `truncated`: more than MAX_PAGES pages since.
 */
export async function activitiesSince(
  autoScalingGroupName: string,
  since: number,
  ctx: AsgContext,
): Promise<{ activities: Activity[]; truncated: boolean }> {
  const activities: Activity[] = [];
  let token: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const out = await withRetry(
      'DescribeScalingActivities',
      () =>
        ctx.autoscaling.send(
          new DescribeScalingActivitiesCommand({
            AutoScalingGroupName: autoScalingGroupName,
            MaxRecords: PAGE_SIZE,
            ...(token ? { NextToken: token } : {}),
          }),
        ),
      ctx,
    );
    let reachedSince = false;
    for (const activity of out.Activities ?? []) {
      const at = activity.StartTime?.getTime();
      if (at === undefined) continue;
      if (at >= since) activities.push(activity);
      else if (ENDED.has(activity.StatusCode ?? '')) reachedSince = true;
    }
    token = out.NextToken;
    if (reachedSince || !token) return { activities, truncated: false };
  }
  return { activities, truncated: true };
}
