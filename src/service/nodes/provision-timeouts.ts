import type { Logger } from 'pino';
import type { PoolNode } from '../ports.ts';
import type { CapacityBackoff } from './capacity.ts';
import type { NodeReadiness } from './readiness.ts';
import type { RemovalWalk } from './removals.ts';
import { allocationName, type GpusInUse } from './victims.ts';

export interface ProvisionTimeoutDeps {
  readonly readiness: NodeReadiness;
  readonly removing: RemovalWalk;
  readonly backoff: CapacityBackoff;
  readonly counters: { provisionTimeouts: number };
  readonly logger: Logger;
  readonly provisionMs: number;
}

/**
 * Nodes launched longer ago than provisionMs and still not ready for jobs, paid for and never usable,
 * are chosen for removal. One boa never saw ready is a failed launch: the capacity backoff holds the
 * next ones (a broken bootstrap or AMI would otherwise cost a wave of nodes every provisionMs).
 */
export function chooseProvisionTimeouts(
  nodes: readonly PoolNode[],
  busy: GpusInUse,
  now: number,
  deps: ProvisionTimeoutDeps,
): void {
  const { readiness, removing, backoff, logger } = deps;
  for (const node of nodes) {
    if (!overdue(node, now, deps) || busy(allocationName(node)) > 0) continue;
    deps.counters.provisionTimeouts += 1;
    logger.warn(
      {
        event: 'node.provision-timeout',
        nodeId: node.id,
        waitingFor: node.waitingFor ?? 'unknown',
        paidSeconds: Math.round((now - node.launchedAt) / 1000),
      },
      'node never became ready for jobs; terminating it',
    );
    removing.choose(node, 'provision-timeout', now);
    // One that was ready, or one cordoned by someone else, says nothing of the launches.
    if (readiness.lastReady(node.id) !== undefined || node.cordoned) continue;
    const waited = Math.round(deps.provisionMs / 1000);
    const reason = `node ${node.id} launched never became ready for jobs in ${waited} s (${node.waitingFor ?? 'unknown'})`;
    if (backoff.neverReady(now, reason))
      logger.warn(
        { event: 'nodes.capacity', ...backoff.view(now), nodeId: node.id },
        'a node launched never became ready; backing off launches',
      );
  }
}

/**
 * Not ready for jobs for `provisionMs`, counted from its launch or from when it was last seen ready
 * (and not on its way out already). A node cordoned by someone else counts too: boa never places jobs
 * there, yet it filled a place in the group, paid for, and no node was launched beside it for a job
 * that waited (found in review: 30 minutes and counting); once empty it goes, and the resize after
 * launches a node jobs can use.
 */
function overdue(node: PoolNode, now: number, deps: ProvisionTimeoutDeps): boolean {
  if (node.ready || node.leaving || deps.removing.includes(node.id)) return false;
  return deps.readiness.overdue(node, now, deps.provisionMs);
}
