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
 * between two listings, or while boa was down. `gone`: every instance whose termination started since
 * and ended, launched then or before. `truncated`: more activities since `since` than one read takes
 * (asg-activities.ts).
 *
 * Gone is the termination's EndTime, not its StartTime: the activity starts when the instance enters
 * Terminating, and EKS's lifecycle hook then holds it in Terminating:Wait, EC2 running and billed, while
 * the node drains; it ends once the instance has left running (EC2 bills neither shutting-down nor
 * terminated). Only a Successful one counts: one that failed may have left the instance running.
 */
export async function instancesLaunchedSince(
  autoScalingGroupName: string,
  since: number,
  ctx: AsgContext,
): Promise<{ instances: LaunchedInstance[]; gone: Map<string, number>; truncated: boolean }> {
  const { activities, truncated } = await activitiesSince(autoScalingGroupName, since, ctx);
  const launched = new Map<string, number>();
  const gone = new Map<string, number>();
  for (const activity of activities) {
    const at = activity.StartTime!.getTime();
    const description = activity.Description ?? '';
    const launch = LAUNCH.exec(description)?.[1];
    if (launch) launched.set(launch, at);
    const terminated = TERMINATE.exec(description)?.[1];
    if (terminated && activity.EndTime && activity.StatusCode === 'Successful') {
      // The latest of two terminations of one instance (a retry): the earlier may have ended first.
      const end = activity.EndTime.getTime();
      gone.set(terminated, Math.max(end, gone.get(terminated) ?? end));
    }
  }
  return { instances: joined(launched, gone), gone, truncated };
}

function joined(launched: Map<string, number>, gone: Map<string, number>): LaunchedInstance[] {
  return [...launched].map(([id, launchedAt]) => {
    const goneAt = gone.get(id);
    return goneAt === undefined ? { id, launchedAt } : { id, launchedAt, goneAt };
  });
}
