import type { Logger } from 'pino';
import type { ClusterNodes } from './cluster-nodes.ts';

/**
 * Cordons (or uncordons: a removal called off) the instances' Kubernetes nodes, by the names the pool's
 * last listing found (`knownNames`), else from Kubernetes' view now (no listing named it yet: a restarted
 * service, or a node registered since). One not registered has nothing that could land on it: skipped.
 */
export async function setCordoned(
  kube: ClusterNodes | undefined,
  knownNames: ReadonlyMap<string, string>,
  nodeIds: readonly string[],
  cordoned: boolean,
  logger: Logger,
): Promise<void> {
  const verb = cordoned ? 'cordon' : 'uncordon';
  for (const id of nodeIds) {
    const name =
      kube && (knownNames.get(id) ?? (await kube.list()).find((node) => node.instanceId === id)?.name);
    if (!kube || !name) {
      logger.info({ event: `node.${verb}-skipped`, instanceId: id, reason: 'not registered' });
      continue;
    }
    if (cordoned) await kube.cordon(name);
    else await kube.uncordon(name);
    logger.info({ event: `node.${verb}ed`, instanceId: id, node: name }, `node ${verb}ed`);
  }
}
