import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EksNodePool } from '../../src/cloud/aws/eks-node-pool.ts';
import { KubeClusterNodes } from '../../src/cloud/aws/kube-cluster-nodes.ts';
import { coreApi } from '../../src/cloud/kubernetes/client.ts';
import { type FakeKubeApi, startFakeKubeApi } from '../fakes/kube-api/index.ts';
import { CLUSTER, emulateNodegroup, NODEGROUP } from './emulated-nodegroup.ts';
import { fakeTime } from './fake-time.ts';

/** Kubernetes node truth through the real @kubernetes/client-node against the fake API server. */
const silent = pino({ level: 'silent' });
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

async function setup(options: { requestTimeoutMs?: number } = {}) {
  const fake: FakeKubeApi = await startFakeKubeApi();
  const time = fakeTime();
  const nodes = new KubeClusterNodes(fake.kubeConfig(), {
    logger: silent,
    clock: time.clock,
    sleep: time.sleep,
    random: () => 0,
    ...options,
  });
  cleanups.push(async () => {
    await nodes.close();
    await fake.close();
  });
  return { fake, nodes, time };
}

/** Watch events arrive asynchronously: poll the cached view for a while. */
async function eventually<T>(read: () => Promise<T>, ok: (value: T) => boolean): Promise<T> {
  let value = await read();
  for (let i = 0; i < 100 && !ok(value); i++) {
    await new Promise((r) => setTimeout(r, 20));
    value = await read();
  }
  return value;
}

describe('KubeClusterNodes (Node watch)', () => {
  it('joins nodes to instances by providerID and follows Ready and deletion through the watch', async () => {
    const { fake, nodes } = await setup();
    fake.kubelet.addNode({
      name: 'ip-10-0-1-1',
      gpus: 4,
      ready: false,
      zone: 'us-east-1a',
      instanceId: 'i-0abc',
    });
    expect(await nodes.list()).toMatchObject([
      { name: 'ip-10-0-1-1', instanceId: 'i-0abc', ready: false, unschedulable: false },
    ]);
    fake.kubelet.setNodeReady('ip-10-0-1-1', true);
    const ready = await eventually(
      () => nodes.list(),
      (l) => l[0]?.ready === true,
    );
    expect(ready).toMatchObject([{ name: 'ip-10-0-1-1', ready: true, gpus: 4 }]);
    fake.kubelet.removeNode('ip-10-0-1-1');
    expect(
      await eventually(
        () => nodes.list(),
        (l) => l.length === 0,
      ),
    ).toEqual([]);
    // Changes came through the watch: one list to start it (the resync is minutes away), one watch.
    const gets = fake.requests.filter((r) => r.method === 'GET' && r.path === '/api/v1/nodes');
    expect(gets.filter((r) => r.watch)).toHaveLength(1);
    expect(gets.filter((r) => !r.watch).length).toBeLessThanOrEqual(2);
  });

  it('lists again when the watch could not start: a failed first list is not taken for no nodes', async () => {
    const { fake, nodes } = await setup();
    fake.kubelet.addNode({ name: 'n1', gpus: 4, ready: true, instanceId: 'i-0abc' });
    // The first list is answered 503 once: retried, not taken for an empty cluster.
    fake.faults.inject({ status: 503, count: 1, match: (r) => !r.watch && r.path === '/api/v1/nodes' });
    expect(await nodes.list()).toMatchObject([{ name: 'n1', instanceId: 'i-0abc', ready: true }]);
  });

  it('a Node watch the server accepts but never answers holds up no read: given up after the request timeout, the nodes are listed', async () => {
    const { fake, nodes } = await setup({ requestTimeoutMs: 300 });
    fake.kubelet.addNode({ name: 'n1', gpus: 4, ready: true, instanceId: 'i-0abc' });
    fake.faults.inject({ timeout: true, count: 1, match: (r) => r.watch && r.path === '/api/v1/nodes' });
    const read = await Promise.race([
      nodes.list(),
      new Promise<'hung'>((done) => setTimeout(() => done('hung'), 20_000)),
    ]);
    expect(read).toMatchObject([{ name: 'n1', instanceId: 'i-0abc' }]);
  });

  it('a Node watch the server ends at once with nothing in it is a failure: listed again at the next read, not resumed in a loop', async () => {
    const { fake, nodes } = await setup();
    fake.kubelet.addNode({ name: 'n1', gpus: 4, ready: true, instanceId: 'i-0abc' });
    fake.faults.inject({
      endAtOnce: true,
      count: 10_000,
      match: (r) => r.watch && r.path === '/api/v1/nodes',
    });
    const gets = (watch: boolean) =>
      fake.requests.filter((r) => r.method === 'GET' && r.path === '/api/v1/nodes' && r.watch === watch)
        .length;
    expect(await nodes.list()).toMatchObject([{ name: 'n1' }]);
    // Not resumed by itself (client-node's informer alone made hundreds in 500 ms): 500 ms once the watch
    // was asked (after the list, not waited for; on a loaded machine it can come later than 500 ms).
    await vi.waitFor(() => expect(gets(true)).toBeGreaterThan(0), { timeout: 20_000 });
    await new Promise((r) => setTimeout(r, 500));
    expect(gets(true)).toBe(1);
    // The watch down, the next read lists (the view stays true) and watches once more.
    fake.kubelet.addNode({ name: 'n2', gpus: 4, ready: true, instanceId: 'i-0abd' });
    const lists = gets(false);
    expect((await nodes.list()).map((n) => n.name).sort()).toEqual(['n1', 'n2']);
    expect(gets(false)).toBe(lists + 1);
    await vi.waitFor(() => expect(gets(true)).toBe(2), { timeout: 20_000 });
    fake.faults.clear();
  });

  it('a Node watch gone quiet without closing is started again at the resync: a node Ready since is seen without waiting for the next', async () => {
    const { fake, nodes, time } = await setup();
    fake.kubelet.addNode({ name: 'n1', gpus: 4, ready: false, instanceId: 'i-0abc' });
    expect(await nodes.list()).toMatchObject([{ name: 'n1', ready: false }]);
    const watches = () => fake.requests.filter((r) => r.watch && r.path === '/api/v1/nodes');
    await vi.waitFor(() => expect(fake.openWatches()).toBe(1), { timeout: 20_000 });
    // The server is asked to end it within 5 minutes, as the pod and service watches are.
    expect(watches()[0]?.query.get('timeoutSeconds')).toBe('300');
    fake.stallWatches();
    fake.kubelet.addNode({ name: 'n2', gpus: 4, ready: true, instanceId: 'i-0abd' });
    // The resync lists (n2 seen) and starts the watch again.
    time.advance(300_000);
    expect((await nodes.list()).map((n) => n.name).sort()).toEqual(['n1', 'n2']);
    fake.kubelet.setNodeReady('n1', true);
    const listed = await eventually(
      () => nodes.list(),
      (l) => l.find((n) => n.name === 'n1')?.ready === true,
    );
    expect(listed.find((n) => n.name === 'n1')).toMatchObject({ ready: true });
    expect(watches()).toHaveLength(2);
  });

  it("reads EKS's update taint (eks.amazonaws.com/nodegroup NoSchedule): the node will be drained for an update", async () => {
    const { fake, nodes } = await setup();
    fake.kubelet.addNode({ name: 'n1', gpus: 4, ready: true, instanceId: 'i-0abc' });
    fake.kubelet.addNode({ name: 'n2', gpus: 4, ready: true, instanceId: 'i-0def' });
    // What a managed node group version update puts on the nodes it is about to drain and replace.
    await coreApi(fake.kubeConfig(), 5_000).patchNode(
      {
        name: 'n1',
        body: {
          spec: {
            taints: [
              { key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' },
              { key: 'eks.amazonaws.com/nodegroup', value: 'unschedulable', effect: 'NoSchedule' },
            ],
          },
        },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const listed = await eventually(
      () => nodes.list(),
      (l) => l.find((n) => n.name === 'n1')?.updating === true,
    );
    expect(listed.find((n) => n.name === 'n1')).toMatchObject({
      updating: true,
      unschedulable: false,
      ready: true,
    });
    // The GPU taint boa's pods tolerate changes nothing.
    expect(listed.find((n) => n.name === 'n2')).toMatchObject({ updating: false, unschedulable: false });
  });

  it('cordons with a merge patch on spec.unschedulable', async () => {
    const { fake, nodes } = await setup();
    fake.kubelet.addNode({ name: 'n1', gpus: 4, ready: true, instanceId: 'i-0def' });
    await nodes.list();
    await nodes.cordon('n1');
    expect(fake.nodes()[0]).toMatchObject({ spec: { unschedulable: true } });
    expect((await nodes.list())[0]).toMatchObject({ unschedulable: true });
    const patch = fake.requests.find((r) => r.method === 'PATCH');
    expect(patch?.path).toBe('/api/v1/nodes/n1');
    // A removal called off: schedulable again, on the API server and in the cache.
    await nodes.uncordon('n1');
    expect(fake.nodes()[0]).toMatchObject({ spec: { unschedulable: false } });
    expect((await nodes.list())[0]).toMatchObject({ unschedulable: false });
  });

  it('retries a throttled cordon in the retry layer, a bounded number of times', async () => {
    const { fake, nodes, time } = await setup();
    fake.kubelet.addNode({ name: 'n1', gpus: 4, ready: true, instanceId: 'i-0def' });
    const patches = () => fake.requests.filter((r) => r.method === 'PATCH').length;
    fake.faults.inject({ status: 429, count: 1, match: (r) => r.method === 'PATCH' });
    await nodes.cordon('n1');
    expect(patches()).toBe(2);
    expect(fake.nodes()[0]).toMatchObject({ spec: { unschedulable: true } });

    fake.faults.inject({ status: 503, count: 10, match: (r) => r.method === 'PATCH' });
    await expect(nodes.cordon('n1')).rejects.toMatchObject({ kind: 'transient', attempts: 4 });
    expect(patches()).toBe(6);
    expect(time.sleeps).toHaveLength(4);
  });

  it('makes an EC2-running instance ready for jobs only once its Node is Ready with its GPUs', async () => {
    const { fake, nodes, time } = await setup();
    const group = emulateNodegroup({ clock: time.clock, minSize: 1, maxSize: 2, desiredSize: 1 });
    const pool = new EksNodePool(
      { clusterName: CLUSTER, nodegroupName: NODEGROUP, gpusPerNode: 4 },
      {
        eks: group.eks,
        ec2: group.ec2,
        autoscaling: group.autoscaling,
        nodes,
        clock: time.clock,
        logger: silent,
      },
    );
    const instance = group.instances[0]!;
    expect(await pool.listNodes()).toMatchObject([
      { id: instance.id, ready: false, billed: true, waitingFor: 'registering' },
    ]);
    fake.kubelet.addNode({
      name: 'ip-10-0-2-2',
      gpus: 0,
      ready: true,
      zone: instance.zone,
      instanceId: instance.id,
    });
    expect(
      await eventually(
        () => pool.listNodes(),
        (l) => l[0]?.waitingFor === 'no-gpus',
      ),
    ).toMatchObject([{ name: 'ip-10-0-2-2', ready: false, waitingFor: 'no-gpus' }]);
    fake.kubelet.removeNode('ip-10-0-2-2');
    fake.kubelet.addNode({
      name: 'ip-10-0-2-2',
      gpus: 4,
      ready: true,
      zone: instance.zone,
      instanceId: instance.id,
    });
    const ready = await eventually(
      () => pool.listNodes(),
      (l) => l[0]?.ready === true,
    );
    expect(ready).toMatchObject([{ id: instance.id, name: 'ip-10-0-2-2', ready: true }]);
    await pool.cordon([instance.id]);
    expect(fake.nodes()[0]).toMatchObject({ spec: { unschedulable: true } });
    expect(
      await eventually(
        () => pool.listNodes(),
        (l) => l[0]?.cordoned === true,
      ),
    ).toMatchObject([{ ready: false, waitingFor: 'cordoned' }]);
  });
});
