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
