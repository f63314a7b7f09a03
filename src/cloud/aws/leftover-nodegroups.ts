import type { GroupRecord } from '../../service/ports.ts';
import { refused } from './asg.ts';
import {
  describeClusterNodegroups,
  type EksContext,
  hasLabels,
  type NodegroupScaling,
} from './eks-nodegroup.ts';

/**
 * The tags the CDK app puts on its node groups (infra/boa-stack.ts: Tags.of(stack), since its first
 * version): a group with the same values as the one boa follows was made by the same deployment. Those
 * CloudFormation adds itself (aws:cloudformation:stack-id, logical-id), where it tags the group, must be
 * the same too: a replaced group keeps its stack and logical id.
 */
export const DEPLOYMENT_TAGS = ['app', 'boa:cluster'] as const;
const CLOUDFORMATION_TAG = /^aws:cloudformation:/;

/**
 * The cluster's node groups a replacement may have left beside `current` (the group boa follows), for a
 * run with nothing stored (the first of a version that stores it, deployed together with an
 * instance-type change): of the same deployment (its tags), carrying boa's labels, under another name.
 * Whether their instances still run, the listing says. A group is never taken when the one followed
 * carries no deployment tags (not made by the CDK app): then nothing tells boa's groups from others.
 */
export function leftoverGroups(
  current: NodegroupScaling,
  groups: readonly NodegroupScaling[],
  labels: Readonly<Record<string, string>>,
): GroupRecord[] {
  const keys = [
    ...DEPLOYMENT_TAGS,
    ...Object.keys(current.tags).filter((key) => CLOUDFORMATION_TAG.test(key)),
  ];
  if (DEPLOYMENT_TAGS.some((key) => current.tags[key] === undefined)) return [];
  return groups
    .filter(
      (group) =>
        group.name !== current.name &&
        hasLabels(group, labels) &&
        keys.every((key) => group.tags[key] === current.tags[key]),
    )
    .map((group) => ({
      name: group.name,
      ...(group.arn ? { arn: group.arn } : {}),
      ...(group.autoScalingGroup ? { autoScalingGroup: group.autoScalingGroup } : {}),
    }));
}

/**
 * leftoverGroups over the cluster's groups as read now. Refused (an IAM policy without eks:ListNodegroups
 * or DescribeNodegroup on the cluster's groups: not the stack's), logged with the fix and answered
 * undefined, so the search is not repeated every tick; any other failure throws (the listing waits for it).
 */
export async function findLeftoverGroups(
  current: NodegroupScaling,
  clusterName: string,
  labels: Readonly<Record<string, string>>,
  ctx: EksContext,
): Promise<GroupRecord[] | undefined> {
  try {
    return leftoverGroups(current, await describeClusterNodegroups(clusterName, ctx), labels);
  } catch (error) {
    if (!refused(error)) throw error;
    ctx.logger.warn(
      {
        event: 'nodegroup.leftovers-unsearched',
        error: (error as Error).message,
        fix: 'grant eks:ListNodegroups on the cluster and eks:DescribeNodegroup on its node groups',
      },
      "cannot list the cluster's node groups: a group replaced before this run is not counted (its nodes " +
        'would be paid outside the budget)',
    );
    return undefined;
  }
}
