// The node groups a replacement of the guarded one left running (an instance-type change: CloudFormation
// deletes the old group only at the end of the update, or never when that cleanup fails): their instances
// are paid too, so the guard allows the guarded group what the budget leaves beside their GPUs (index.mjs).

import { DescribeNodegroupCommand, ListNodegroupsCommand } from '@aws-sdk/client-eks';

/** The labels the CDK app puts on the GPU node group (infra/gpu-nodegroup.ts). */
export const GPU_LABELS = { 'boa/node-role': 'gpu' };
/** The tags the CDK app puts on its node groups (infra/boa-stack.ts): which deployment made a group. */
export const DEPLOYMENT_TAGS = ['app', 'boa:cluster'];

/**
 * The cluster's other node groups a replacement left (an instance-type change: CloudFormation deletes
 * the old group only at the end of the update, or never when that cleanup fails): boa's labels and the
 * same deployment tags (and CloudFormation's aws:cloudformation:* where set) as the group guarded, as boa
 * itself finds them (src/cloud/aws/leftover-nodegroups.ts). None when the guarded group has no such tags.
 */
export function leftoverGroups(guarded, groups) {
  const tags = guarded?.tags ?? {};
  if (DEPLOYMENT_TAGS.some((key) => tags[key] === undefined)) return [];
  const keys = [...DEPLOYMENT_TAGS, ...Object.keys(tags).filter((k) => k.startsWith('aws:cloudformation:'))];
  return groups.filter(
    (group) =>
      group.nodegroupName !== guarded.nodegroupName &&
      Object.entries(GPU_LABELS).every(([k, v]) => group.labels?.[k] === v) &&
      keys.every((key) => group.tags?.[key] === tags[key]),
  );
}

/**
 * The replaced groups' names, how many instances of their Auto Scaling groups are still paid and their
 * GPUs (`gpusOf` an instance type); `instancesOf` reads an Auto Scaling group's as the guard reads its
 * own. Terminating ones count: CloudFormation's cleanup deletes the group and EKS's lifecycle hook keeps
 * each instance running (paid) in Terminating:Wait while it drains its node, minutes and more. Counted as
 * gone (found in review), they left the budget to the guarded group while they were still paid.
 */
export async function replacedInstances(eks, clusterName, guarded, instancesOf, gpusOf) {
  const names = [];
  let nextToken;
  do {
    const page = await eks.send(
      new ListNodegroupsCommand({ clusterName, ...(nextToken ? { nextToken } : {}) }),
    );
    names.push(...(page?.nodegroups ?? []));
    nextToken = page?.nextToken;
  } while (nextToken);
  const groups = [];
  for (const nodegroupName of names.filter((name) => name !== guarded.nodegroupName)) {
    try {
      const { nodegroup } = await eks.send(new DescribeNodegroupCommand({ clusterName, nodegroupName }));
      if (nodegroup) groups.push(nodegroup);
    } catch (error) {
      // Deleted between the two calls: CloudFormation's cleanup.
      if (error?.name !== 'ResourceNotFoundException') throw error;
    }
  }
  const leftovers = leftoverGroups(guarded, groups);
  let running = 0;
  let gpus = 0;
  for (const group of leftovers) {
    const asg = group.resources?.autoScalingGroups?.[0]?.name;
    if (!asg) continue;
    const { paidTypes } = await instancesOf(asg);
    running += paidTypes.length;
    for (const type of paidTypes) gpus += gpusOf(type);
  }
  return { running, gpus, groups: leftovers.map((g) => g.nodegroupName) };
}
