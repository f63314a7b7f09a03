import { afterEach, describe, expect, it } from 'vitest';
import { KubeClusterNodes } from '../../src/cloud/aws/kube-cluster-nodes.ts';
import { type FakeKubeApi, startFakeKubeApi } from '../fakes/kube-api/index.ts';
import { captureLogs, fakeTime } from './fake-time.ts';

/** GPUs held on boa's nodes by pods it did not create, read through the real client from the fake. */
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

const gpuPod = (name: string, node: string, gpus: number, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'research', ...extra },
  spec: {
    nodeName: node,
    containers: [{ name: 'c', image: 'x', resources: { requests: { 'nvidia.com/gpu': String(gpus) } } }],
  },
  status: { phase: 'Running' },
});

describe('ForeignGpuPods (through KubeClusterNodes)', () => {
  it("counts other pods' GPU requests on the node: not boa's, not finished ones, not other nodes'", async () => {
    const fake: FakeKubeApi = await startFakeKubeApi();
    const time = fakeTime();
    const logs = captureLogs();
    const nodes = new KubeClusterNodes(fake.kubeConfig(), {
      logger: logs.logger,
      clock: time.clock,
      sleep: time.sleep,
      random: () => 0,
    });
    cleanups.push(async () => {
      await nodes.close();
      await fake.close();
    });
    const create = (pod: object) => fake.store.create('pods', 'research', pod as never);
    create(gpuPod('notebook', 'n1', 1));
    // An init container asking for more than the containers' sum holds that many (the scheduler's rule;
    // a limit alone is the request).
    const init = gpuPod('debug', 'n1', 1);
    const initContainer = { name: 'i', image: 'x', resources: { limits: { 'nvidia.com/gpu': '3' } } };
    create({ ...init, spec: { ...init.spec, initContainers: [initContainer] } });
    create(gpuPod('no-gpus', 'n1', 0));
    create(gpuPod('boa-job-1-g1-r0', 'n1', 4, { labels: { 'app.kubernetes.io/managed-by': 'boa' } }));
    create({ ...gpuPod('done', 'n1', 2), status: { phase: 'Succeeded' } });
    create(gpuPod('elsewhere', 'n2', 3));

    const read = await nodes.foreignGpus(['n1', 'n3']);
    expect([...read.entries()]).toEqual([['n1', { gpus: 4, pods: ['research/notebook', 'research/debug'] }]]);
    // Read again (every tick): each pod is named in the log once.
    fake.faults.inject({ status: 500, count: 4, match: (r) => r.path === '/api/v1/pods' });
    expect((await nodes.foreignGpus(['n1'])).get('n1')?.gpus).toBe(4); // a failed list keeps the last count
    await nodes.foreignGpus(['n1']);
    const named = logs.lines.filter((l) => l.event === 'node.foreign-gpu-pod').map((l) => l.pod);
    expect(named).toEqual(['research/notebook', 'research/debug']);
    // One list per node, by spec.nodeName, leaving finished pods out on the server's side.
    const lists = fake.requests.filter((r) => r.path === '/api/v1/pods' && r.status === 200);
    expect(lists[0]?.query.get('fieldSelector')).toBe(
      'spec.nodeName=n1,status.phase!=Succeeded,status.phase!=Failed',
    );
  });
});
