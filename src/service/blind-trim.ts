import type { DesiredSize } from './nodes/desired-size.ts';
import type { NodeGroupState, PoolNode } from './ports.ts';
import { replanIfGroupResized } from './plan-inputs.ts';
import type { BoaService } from './service.ts';

/**
 * A tick whose listing failed describes the node group once all the same: EKS often answers while EC2
 * or the Auto Scaling API do not (throttled, refused, down). The group as described is the tick's
 * (status, passes, the blind trim, the unlisted count); undefined when describe failed too. Before, only
 * a restart described the group in an outage: a boa running on kept the group as described before it,
 * and a raise from outside (the console) counted nothing and stood, 3.67 GPU-hours paid in 19 minutes
 * against the 1.27 allowed (test/service/listing-outage-outside-raise.test.ts).
 */
export async function describeUnlisted(service: BoaService): Promise<NodeGroupState | undefined> {
  const { state, deps } = service;
  try {
    state.group = await deps.pool.describe();
  } catch (error) {
    // The listing's failure is the one counted and logged; the size counted is the last known.
    deps.logger.debug(
      { event: 'nodes.describe-failed', error: (error as Error).message },
      'node group not described while its nodes cannot be listed',
    );
    return undefined;
  }
  replanIfGroupResized(service);
  return state.group;
}

/**
 * A tick whose listing failed: the GPUs the group may pay for beyond the listing the ledger last stored
 * are counted paid (unlisted-paid.ts), after a restart too, from the count stored before it. The size is
 * the group's as `described` this tick (describeUnlisted), else as last known (stored with the count: a
 * restart may not describe the group either), or what boa asked of it since the stored listing,
 * whichever is more. Each node at the group's GPUs as last described (stored alike), not the configured
 * ones: its type may have been changed outside the stack.
 */
export function countUnlisted(service: BoaService, now: number, described: NodeGroupState | undefined): void {
  const { state, deps } = service;
  const since = state.unlisted.listedAt;
  if (since === undefined) return;
  const asked = deps.repo.lastResize();
  const desired = Math.max(
    described?.desiredSize ?? state.unlisted.desiredNodes,
    asked !== undefined && asked.at >= since ? asked.requested : 0,
  );
  state.unlisted.failed(now, desired, state.group?.gpusPerNode, deps.config.gpusPerNode);
}

/**
 * After a restart whose listings fail, boa changes no job and no node until a listing (deciding on none
 * took every job off its nodes). But a group raised before the restart, in the same outage, then paid
 * its raised size until a listing came back (the guard outside acts only after its silence): a window
 * paid 7.10 GPU-hours against the 4.06 allowed (test/service/budget-listing-outage-restart.test.ts). So
 * the one change boa makes blind: a desired size, as the group reports it, above the spend ceiling's
 * node count (the unlisted nodes counted paid, unlisted-paid.ts) is lowered to it, never below the
 * nodes a job or the ledger's last listing holds, those protected from scale-in first, so only
 * launches since that no job is on can go. The ceiling counts nodes of the configured GPUs, the group's
 * size its own: a group of 4-GPU nodes under a 1-GPU configuration was left at 4 times the GPUs the
 * budget allows (test/service/listing-outage-instance-gpus.test.ts), so the ceiling is taken in the
 * group's nodes, at their GPUs as described now or, when the group names no type, at the last listing.
 * `group`: as the tick described it (describeUnlisted). Returns the size sent, or undefined when none
 * was (nothing to trim, the group not described, or the pool refused).
 */
export async function trimBlind(
  service: BoaService,
  size: DesiredSize,
  ceilingNodes: number,
  now: number,
  group: NodeGroupState | undefined,
): Promise<number | undefined> {
  const { state, deps } = service;
  // Not described this tick: the size is not known. Sent on a stale one, a group the guard outside has
  // lowered since was raised again. The guard holds it after boa's silence, as with boa down.
  if (group === undefined) return undefined;
  size.observe(group);
  if (group.updateInFlight) return undefined;
  // Protected by instance id, which only the ledger's rows hold: allocations name a node as jobs see it
  // (its Kubernetes name on EKS), which SetInstanceProtection refuses. A job is placed only on nodes of a
  // stored listing, so the ledger's open rows hold every node a job is on; allocations only count.
  const keep = deps.repo.ledger.openNodeIds();
  const jobNodes = new Set<string>();
  for (const job of state.jobs.values()) for (const name of job.allocation) jobNodes.add(name);
  const nodeGpus = group.gpusPerNode ?? state.unlisted.nodeGpus ?? deps.config.gpusPerNode;
  const want = Math.max(
    groupNodesWithin(ceilingNodes, nodeGpus / deps.config.gpusPerNode),
    keep.length,
    jobNodes.size,
    group.minSize,
  );
  if (!Number.isFinite(want) || want >= group.desiredSize) return undefined;
  // Only ids are read (protection): the ledger keeps no more of a node.
  const kept: PoolNode[] = keep.map((id) => ({
    id,
    gpus: nodeGpus,
    launchedAt: now,
    ready: true,
  }));
  try {
    if (!(await size.send(want, group, kept, now))) return undefined;
  } catch (error) {
    // Protection refused (the outage reaches the Auto Scaling API too): nothing lowered, tried next tick.
    deps.logger.warn(
      { event: 'nodes.blind-trim-failed', want, desired: group.desiredSize, error: (error as Error).message },
      'could not lower the node group while its nodes cannot be listed',
    );
    return undefined;
  }
  deps.logger.warn(
    { event: 'nodes.blind-trim', want, desired: group.desiredSize, kept: keep.length },
    'node group lowered to the spend ceiling while its nodes cannot be listed',
  );
  state.unlisted.resized(want);
  return want;
}

/**
 * The group's nodes within `ceilingNodes` nodes of the configured GPUs, each of the group's `unit` of
 * them (its GPUs over the configured): whole ones, a hair of tolerance as the ceiling's own count.
 */
function groupNodesWithin(ceilingNodes: number, unit: number): number {
  if (!Number.isFinite(ceilingNodes)) return ceilingNodes;
  return Math.floor(ceilingNodes / unit + 1e-9);
}
