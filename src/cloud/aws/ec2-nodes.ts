import { type EC2Client, type Filter, paginateDescribeInstances } from '@aws-sdk/client-ec2';
import type { Clock, PoolNode } from '../../service/ports.ts';
import type { RetryContext } from '../retry.ts';
import { withRetry } from './retry.ts';

export interface NodegroupRef {
  readonly clusterName: string;
  readonly nodegroupName: string;
}

/** EC2 allows 5 to 1000 results per page; a node group is far smaller, so pages are rare anyway. */
const PAGE_SIZE = 500;

/**
 * EKS managed node groups tag their instances with these. Pending instances are listed too (they are
 * launching and count against the desired size), but EC2 bills from running only: the pool marks them
 * billed: false and the ledger opens a node once it is running, counted from its LaunchTime: the
 * seconds it was pending (EC2 gives no time it started running) are paid in the ledger and not billed,
 * so the ledger errs toward boa spending a little less than it may.
 */
export function nodegroupFilters(ref: NodegroupRef, alsoGroups: readonly string[] = []): Filter[] {
  const names = [ref.nodegroupName, ...alsoGroups.filter((name) => name !== ref.nodegroupName)];
  return [
    { Name: 'tag:eks:cluster-name', Values: [ref.clusterName] },
    { Name: 'tag:eks:nodegroup-name', Values: names },
    { Name: 'instance-state-name', Values: ['pending', 'running'] },
  ];
}

/**
 * A listed instance with the groups its tags name (EKS and its Auto Scaling group tag each instance) and
 * its EC2 instance type (a replaced group's may not be the configured one: replaced-nodegroups.ts).
 */
export type ListedInstance = PoolNode & {
  readonly nodegroup?: string;
  readonly autoScalingGroup?: string;
  readonly instanceType?: string;
};

/**
 * The node group's instances that exist now, from EC2 (the ledger's truth, not the group's desired
 * size), all pages. `ready` here means EC2 running; the pool then joins Kubernetes' view (Ready, not
 * cordoned, GPUs advertised) to decide whether jobs may use the node. `gpus` is the configured GPUs per
 * node; the pool counts each at its own `instanceType`'s (instance-type-check.ts). A throttled
 * page restarts the whole listing: reads are safe to repeat and a partial list would undercount.
 * `alsoGroups`: more node groups' names (replaced ones) listed by the same call.
 */
export async function listNodegroupInstances(
  ec2: EC2Client,
  ref: NodegroupRef,
  gpusPerNode: number,
  ctx: RetryContext & { readonly clock: Clock },
  alsoGroups: readonly string[] = [],
): Promise<ListedInstance[]> {
  const nodes = await withRetry(
    'DescribeInstances',
    async () => {
      const found = new Map<string, ListedInstance>();
      const pages = paginateDescribeInstances(
        { client: ec2, pageSize: PAGE_SIZE },
        { Filters: nodegroupFilters(ref, alsoGroups) },
      );
      for await (const page of pages) {
        for (const instance of (page.Reservations ?? []).flatMap((r) => r.Instances ?? [])) {
          if (!instance.InstanceId) continue;
          let launchedAt = instance.LaunchTime?.getTime();
          if (launchedAt === undefined) {
            // Never seen in practice; count the node as launched now rather than not paying for it.
            launchedAt = ctx.clock.now();
            ctx.logger.warn({ event: 'node.no-launch-time', nodeId: instance.InstanceId }, 'no LaunchTime');
          }
          const tag = (key: string) => instance.Tags?.find((t) => t.Key === key)?.Value;
          const nodegroup = tag('eks:nodegroup-name');
          const autoScalingGroup = tag('aws:autoscaling:groupName');
          found.set(instance.InstanceId, {
            id: instance.InstanceId,
            launchedAt,
            gpus: gpusPerNode,
            ready: instance.State?.Name === 'running',
            ...(nodegroup ? { nodegroup } : {}),
            ...(autoScalingGroup ? { autoScalingGroup } : {}),
            ...(instance.InstanceType ? { instanceType: instance.InstanceType } : {}),
          });
        }
      }
      return [...found.values()];
    },
    ctx,
  );
  return nodes.sort((a, b) => a.launchedAt - b.launchedAt || a.id.localeCompare(b.id));
}
