// The node group's EC2 instances joined to their Kubernetes nodes: apart from the pool's AWS calls.
import type { PoolNode } from '../../service/ports.ts';
import type { ClusterNodes } from './cluster-nodes.ts';

/**
 * The listed instances as EksNodePool.listNodes reports them; with a Kubernetes view, the instances'
 * node names go to `setNames`, whole, before anything else is awaited: cordon and uncordon read them
 * while a listing runs (the node pass runs beside the next tick's listing), and a map emptied while the
 * foreign GPU pods were listed made both skip the node as not registered (found in review: a removal
 * called off left its node cordoned, never ready for jobs again and paid).
 */
export async function joinClusterNodes(
  listed: readonly PoolNode[],
  leaving: ReadonlySet<string>,
  kube: ClusterNodes | undefined,
  setNames: (names: Map<string, string>) => void,
): Promise<PoolNode[]> {
  const out = (id: string) => (leaving.has(id) ? { leaving: true } : {});
  if (!kube) {
    return listed.map((n) => {
      const waitingFor = leaving.has(n.id) ? 'leaving' : n.ready ? undefined : 'booting';
      return {
        ...n,
        ready: waitingFor === undefined,
        billed: n.ready,
        ...out(n.id),
        ...(waitingFor ? { waitingFor } : {}),
      };
    });
  }
  const byInstance = new Map<string, Awaited<ReturnType<ClusterNodes['list']>>[number]>();
  for (const node of await kube.list()) if (node.instanceId) byInstance.set(node.instanceId, node);
  const names = new Map<string, string>();
  for (const { id } of listed) {
    const name = byInstance.get(id)?.name;
    if (name) names.set(id, name);
  }
  setNames(names);
  const registered = listed.flatMap((i) => {
    const name = byInstance.get(i.id)?.name;
    return name && !leaving.has(i.id) ? [name] : [];
  });
  const foreign = (await kube.foreignGpus?.(registered)) ?? new Map();
  return listed.map((instance) => {
    const running = instance.ready;
    const node = byInstance.get(instance.id);
    const waitingFor = leaving.has(instance.id)
      ? 'leaving'
      : !running
        ? 'booting'
        : !node
          ? 'registering'
          : !node.ready
            ? 'not-ready'
            : // Its own type's GPUs: a replaced group's node may have fewer than the configured type.
              node.gpus < instance.gpus
              ? 'no-gpus'
              : node.unschedulable
                ? 'cordoned'
                : undefined;
    return {
      ...instance,
      ready: waitingFor === undefined,
      billed: running,
      ...out(instance.id),
      ...(node ? { name: node.name } : {}),
      ...(node?.unschedulable ? { cordoned: true } : {}),
      ...(node && foreign.has(node.name)
        ? { foreignGpus: foreign.get(node.name)?.gpus, foreignPods: foreign.get(node.name)?.pods }
        : {}),
      // EKS will drain it for an update: its jobs stay until then, nothing new goes there.
      ...(node?.updating && waitingFor === undefined ? { keepOnly: true } : {}),
      ...(waitingFor ? { waitingFor } : {}),
    };
  });
}
