import { DescribeScalingActivitiesCommand } from '@aws-sdk/client-auto-scaling';
import type { LaunchedInstance } from '../../service/ports.ts';
import type { AsgContext } from './asg.ts';
import { withRetry } from './retry.ts';

// The ASG's activity descriptions name the instance (a failed launch without one names none).
const LAUNCH = /^Launching a new EC2 instance: (i-[0-9a-z]+)/;
const TERMINATE = /^Terminating EC2 instance: (i-[0-9a-z]+)/;
/** Activities per page (the API's maximum) and pages per read: 500 activities, a bounded look back. */
const PAGE_SIZE = 100;
const MAX_PAGES = 5;

/**
 * The instances the group launched since `since` (ms), from its scaling activities (newest first, kept
 * six weeks): when each launch started and, once its termination activity has ended, when it was gone.
 * Unlike DescribeInstances' view of the present, this still holds an instance that came and went
 * between two listings, or while boa was down. `truncated`: more than MAX_PAGES pages since `since`.
 */
export async function instancesLaunchedSince(
  autoScalingGroupName: string,
  since: number,
  ctx: AsgContext,
): Promise<{ instances: LaunchedInstance[]; truncated: boolean }> {
  const launched = new Map<string, number>();
  const gone = new Map<string, number>();
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
      if (at < since) {
        reachedSince = true;
        continue;
      }
      const description = activity.Description ?? '';
      const launch = LAUNCH.exec(description)?.[1];
      if (launch) launched.set(launch, at);
      const terminated = TERMINATE.exec(description)?.[1];
      if (terminated && activity.EndTime) gone.set(terminated, activity.EndTime.getTime());
    }
    token = out.NextToken;
    if (reachedSince || !token) return { instances: joined(launched, gone), truncated: false };
  }
  return { instances: joined(launched, gone), truncated: true };
}

function joined(launched: Map<string, number>, gone: Map<string, number>): LaunchedInstance[] {
  return [...launched].map(([id, launchedAt]) => {
    const goneAt = gone.get(id);
    return goneAt === undefined ? { id, launchedAt } : { id, launchedAt, goneAt };
  });
}
