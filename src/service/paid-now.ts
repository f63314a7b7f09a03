/**
 * What is paid for at this instant: EC2 bills an instance from running, not while it is pending, so a
 * node the pool lists with `billed: false` is not paid yet. The ledger, the below-budget split, status,
 * /metrics and CloudWatch all read paid through here, so they agree while nodes boot.
 */
import type { PoolNode } from './ports.ts';

export const isBilled = (node: PoolNode): boolean => node.billed !== false;

/** GPUs of the nodes paid for now. */
export function paidGpusNow(nodes: Iterable<PoolNode>): number {
  let paid = 0;
  for (const node of nodes) if (isBilled(node)) paid += node.gpus;
  return paid;
}

/**
 * GPUs paid now as boa knows them: the billed nodes listed. Before the pool has answered since the
 * start, the list is boot's empty one and read 0 paid while the nodes ran on (found in review): the
 * ledger's nodes still open are what it books as paid until a listing says they are gone.
 */
export function knownPaidGpus(
  state: { readonly nodesListed: boolean; readonly nodes: Iterable<PoolNode> },
  ledger: { openNodeGpus(): number },
): number {
  return state.nodesListed ? paidGpusNow(state.nodes) : ledger.openNodeGpus();
}
