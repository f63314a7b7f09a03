import type { LaunchedInstance } from '../../service/ports.ts';
import { activitiesSince } from './asg-activities.ts';
import type { AsgContext } from './asg.ts';

// The ASG's activity descriptions name the instance (a failed launch without one names none).
const LAUNCH = /^Launching a new EC2 instance: (i-[0-9a-z]+)/;
const TERMINATE = /^Terminating EC2 instance: (i-[0-9a-z]+)/;
/**
 * The instances the group launched since `since` (ms), from its scaling activities (newest first, kept
 * six weeks): when each launch started and, once its termination activity has ended, when it was gone.
 * Unlike DescribeInstances' view of the present, this still holds an instance that came and went
 * between two listings, or while boa was down. `truncated`: more activities since `since` than one read takes (asg-activities.ts).
 */
export async function instancesLaunchedSince(
  autoScalingGroupName: string,
  since: number,
  ctx: AsgContext,
): Promise<{ instances: LaunchedInstance[]; truncated: boolean }> {
  const { activities, truncated } = await activitiesSince(autoScalingGroupName, since, ctx);
  const launched = new Map<string, number>();
  const gone = new Map<string, number>();
  for (const activity of activities) {
    const at = activity.StartTime!.getTime();
    const description = activity.Description ?? '';
    const launch = LAUNCH.exec(description)?.[1];
    if (launch) launched.set(launch, at);
    const terminated = TERMINATE.exec(description)?.[1];
    if (terminated && activity.EndTime) gone.set(terminated, activity.EndTime.getTime());
  }
  return { instances: joined(launched, gone), truncated };
}

function joined(launched: Map<string, number>, gone: Map<string, number>): LaunchedInstance[] {
  return [...launched].map(([id, launchedAt]) => {
    const goneAt = gone.get(id);
    return goneAt === undefined ? { id, launchedAt } : { id, launchedAt, goneAt };
  });
}
