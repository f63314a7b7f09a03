import { NodeRemovals } from '../../store/node-removals.ts';
import type { BoaService } from '../service.ts';
import { NodeReconciler } from './reconciler.ts';

export { NodeReconciler } from './reconciler.ts';

/** The service's node reconciler, over its pool and store, with the configured timings. */
export function nodeReconcilerFor(service: BoaService): NodeReconciler {
  const { config, pool, repo, clock, logger } = service.deps;
  return new NodeReconciler({
    pool,
    removals: new NodeRemovals(repo.db),
    repo,
    clock,
    logger: logger.child({ component: 'nodes' }),
    onGroup: (group) => {
      service.state.group = group;
    },
    // Between ticks only, and only if no tick listed since it was asked for: a tick works on the one
    // listing it took at its start, and keeps it as the newest.
    listBetweenTicks: async () => {
      const { state } = service;
      const listing = state.nodesListing;
      const nodes = await pool.listNodes();
      if (state.tickStartedAt === undefined && state.nodesListing === listing) state.nodes = nodes;
    },
    settings: {
      provisionMs: config.nodes.provisionSeconds * 1000,
      notReadyGraceMs: config.nodes.notReadyGraceSeconds * 1000,
      backoff: {
        baseMs: config.nodes.capacityBackoffSeconds * 1000,
        maxMs: config.nodes.capacityBackoffMaxSeconds * 1000,
      },
      ...(config.maxNodes !== undefined ? { maxNodes: config.maxNodes } : {}),
      gpusPerNode: config.gpusPerNode,
    },
  });
}
