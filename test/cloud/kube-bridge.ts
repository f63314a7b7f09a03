import { type FakeKubeApi, type FakeKubeApiOptions, startFakeKubeApi } from '../fakes/kube-api/index.ts';
import type { EmulatedKubeNodes } from './emulated-kube-nodes.ts';

/**
 * Serves the emulated node group's Kubernetes Nodes from the shared fake API server (test/fakes/kube-api),
 * so boa reads and cordons them through the real @kubernetes/client-node. `sync()` makes the fake's
 * Nodes match the emulator's (registered, Ready or not, gone with their instance); a cordon boa sends
 * lands on the fake's Node and stays until the Node goes.
 */
export async function kubeBridge(
  emulated: EmulatedKubeNodes,
  gpusPerNode = 4,
  fakeOptions: FakeKubeApiOptions = {},
) {
  const fake: FakeKubeApi = await startFakeKubeApi(fakeOptions);
  const readyOf = (node: { status?: { conditions?: Array<{ type?: string; status?: string }> } }) =>
    (node.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
  const sync = () => {
    const wanted = emulated.objects();
    const have = new Map(fake.nodes().map((n) => [n.metadata.name as string, n]));
    for (const node of wanted) {
      const name = node.metadata?.name as string;
      const ready = readyOf(node as never);
      const existing = have.get(name);
      if (!existing) {
        const [, , , zone, instanceId] = (node.spec?.providerID ?? '').split('/');
        fake.kubelet.addNode({ name, gpus: gpusPerNode, ready, zone, instanceId });
      } else if (readyOf(existing as never) !== ready) {
        fake.kubelet.setNodeReady(name, ready);
      }
      // Taints (EKS's update taint) follow the emulator's too.
      const taints = (node.spec as { taints?: unknown[] } | undefined)?.taints ?? [];
      const current = fake.nodes().find((n) => n.metadata.name === name);
      if (JSON.stringify(current?.spec?.taints ?? []) !== JSON.stringify(taints)) {
        fake.store.update('nodes', undefined, name, (n) => ({ ...n, spec: { ...n.spec, taints } }));
      }
      have.delete(name);
    }
    for (const name of have.keys()) fake.kubelet.removeNode(name);
  };
  /** Node names boa cordoned (PATCH spec.unschedulable), in order. */
  const cordons = () =>
    fake.requests
      .filter((r) => r.method === 'PATCH' && r.path.startsWith('/api/v1/nodes/'))
      .map((r) => decodeURIComponent(r.path.slice('/api/v1/nodes/'.length)));
  return { fake, sync, cordons, close: () => fake.close() };
}
