/**
 * fixed-request: the reservation baseline. Each job gets exactly what its user asked for in the trace
 * (num_replicas GPUs, placed on as few nodes as possible), first come first served with no backfill, and
 * the cluster grows to fit the queue. With a budget, the budget caps the GPUs rented: at most
 * floor(budget / 4) nodes, and a request above the cap is cut to it (it could never run otherwise).
 */
import { executeWidths } from '../../../core/exec/execute.ts';
import type { Decision, PolicyDefinition, PolicyOptions } from '../../policy.ts';

export class FixedRequestOptionsError extends Error {
  override name = 'FixedRequestOptionsError';
}

function capNodes(options: PolicyOptions, gpusPerNode: number): number | undefined {
  if (options.budget === undefined) return undefined;
  const nodes = Math.floor(options.budget / gpusPerNode);
  if (!(nodes >= 1)) {
    throw new FixedRequestOptionsError(
      `fixed-request: a budget caps the GPUs rented and must allow one ${gpusPerNode}-GPU node, got ${options.budget}`,
    );
  }
  return nodes;
}

export const fixedRequestPolicy: PolicyDefinition = {
  name: 'fixed-request',
  mode: 'autoscaled',
  knob: 'budget',
  describe: 'reservation baseline: each job gets its trace request (num_replicas GPUs), FIFO, autoscaled',
  create(context, options) {
    const cap = capNodes(options, context.gpusPerNode);
    return {
      name: 'fixed-request',
      decide(cluster, jobs): Decision {
        const maxNodes = Math.min(cluster.maxNodes, cap ?? cluster.maxNodes);
        const maxGpus = maxNodes * cluster.gpusPerNode;
        const out = executeWidths(
          jobs.map((job) => ({
            id: job.id,
            width: Math.min(maxGpus, Math.max(1, job.requestedGpus)),
            current: job.allocation,
          })),
          cluster.nodes,
          { gpusPerNode: cluster.gpusPerNode, maxNodes, shortfall: 'gang' },
        );
        return { allocations: out.allocations, desiredNodes: out.desiredNodes };
      },
    };
  },
};
