import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SHORT_WATCH_MS } from '../../src/cloud/kubernetes/client.ts';
import { createKubernetesExecutor } from '../../src/cloud/kubernetes/index.ts';
import type { DesiredJob, Executor, Workload } from '../../src/service/ports.ts';
import { type FakeKubeApi, startFakeKubeApi } from '../fakes/kube-api/index.ts';
import { captureLogs } from './fake-time.ts';

/**
 * The executor's watch-backed cache against the fake API server, through the real client: a watch
 * never holds up a reconcile, and a watch that is down or ended is started again.
 */
const NS = 'boa-jobs';
const workload: Workload = { image: 'repo/train:1', command: ['python3', 'train.py'] };

function job(jobId: number, node: string): DesiredJob {
  return {
    jobId,
    generation: 1,
    replicas: [{ jobId, generation: 1, rank: 0, node, gpus: 4, workload, env: {} }],
  };
}
const within = <T>(p: Promise<T>, ms: number) =>
  Promise.race([p, new Promise<'hung'>((r) => setTimeout(() => r('hung'), ms))]);

describe('Kubernetes executor watches', () => {
  let fake: FakeKubeApi;
  let node: string;
  let logs: ReturnType<typeof captureLogs>;
  const executors: Executor[] = [];

  const executor = (options: { requestTimeoutMs?: number } = {}) => {
    const created = createKubernetesExecutor(
      { terminationGraceSeconds: 60, kubernetes: { namespace: NS, ...options } },
      logs.logger,
      {
        instanceId: 'test-boa',
        kubeConfig: fake.kubeConfig(),
        sleep: async () => undefined,
        random: () => 0.5,
      },
    );
    executors.push(created);
    return created;
  };
  const podRequests = (watch: boolean) =>
    fake.requests.filter((r) => r.method === 'GET' && r.watch === watch && r.path.endsWith('/pods'));

  beforeEach(async () => {
    fake = await startFakeKubeApi({ kubelet: { autoStartMs: 0 } });
    node = fake.kubelet.addNode().metadata.name;
    logs = captureLogs();
  });
  afterEach(async () => {
    for (const e of executors.splice(0)) await e.close();
    await fake.close();
  });

  it('a watch the server accepts but never answers holds up no reconcile; given up after the request timeout, the next read lists and watches again', async () => {
    const e = executor({ requestTimeoutMs: 300 });
    fake.faults.inject({ timeout: true, count: 1, match: (r) => r.watch && r.path.endsWith('/pods') });
    expect(await within(e.reconcile([job(1, node)]), 20_000)).not.toBe('hung');
    expect(fake.pods(NS).map((p) => p.metadata.name)).toEqual(['boa-job-1-g1-r0']);
    // The watch is asked after the list, without being waited for.
    await vi.waitFor(() => expect(fake.faults.pending()).toBe(0), { timeout: 20_000 });

    await vi.waitFor(
      () =>
        expect(logs.lines).toContainEqual(
          expect.objectContaining({ event: 'kube.watch.failed', resource: 'pods' }),
        ),
      { timeout: 20_000 },
    );
    const lists = podRequests(false).length;
    await e.reconcile([job(1, node)]);
    expect(podRequests(false)).toHaveLength(lists + 1);
    await vi.waitFor(() => expect(podRequests(true)).toHaveLength(1), { timeout: 20_000 });
    // With the watch up again, a read lists no more.
    await e.reconcile([job(1, node)]);
    expect(podRequests(false)).toHaveLength(lists + 1);
  });

  it('a watch asks the server to end it in time, and one the server ends is resumed without a list', async () => {
    const e = executor();
    await e.reconcile([job(2, node)]);
    await vi.waitFor(() => expect(podRequests(true)).toHaveLength(1), { timeout: 20_000 });
    // Even a stream gone quiet without closing ends then, and is started again.
    expect(podRequests(true)[0]?.query.get('timeoutSeconds')).toBe('300');
    const lists = podRequests(false).length;
    // Past a very short watch's second, which would be taken for a failure (the next test).
    await new Promise((r) => setTimeout(r, SHORT_WATCH_MS));
    fake.closeWatches();
    await vi.waitFor(() => expect(podRequests(true)).toHaveLength(2), { timeout: 20_000 });
    expect(Number(podRequests(true)[1]?.query.get('resourceVersion'))).toBeGreaterThan(0);
    await e.reconcile([job(2, node)]);
    expect(podRequests(false)).toHaveLength(lists);
  });

  it('a watch the server ends at once with nothing in it is a failure: listed again at the next read, not resumed in a loop', async () => {
    const e = executor();
    // A proxy that cuts every pod watch (the unguarded watch measured about 1,000 requests a second).
    fake.faults.inject({ endAtOnce: true, count: 10_000, match: (r) => r.watch && r.path.endsWith('/pods') });
    await e.reconcile([job(3, node)]);
    // Its failure said (not within a fixed time: a loaded machine takes longer), then 500 ms in which a
    // watch resumed in a loop would have been asked again many times.
    await vi.waitFor(
      () =>
        expect(logs.lines).toContainEqual(
          expect.objectContaining({ event: 'kube.watch.failed', resource: 'pods' }),
        ),
      { timeout: 20_000 },
    );
    await new Promise((r) => setTimeout(r, 500));
    expect(podRequests(true)).toHaveLength(1);
    // The next read lists, the cache being down, and watches once more.
    const lists = podRequests(false).length;
    await e.reconcile([job(3, node)]);
    expect(podRequests(false)).toHaveLength(lists + 1);
    await vi.waitFor(() => expect(podRequests(true)).toHaveLength(2), { timeout: 20_000 });
    fake.faults.clear();
  });
});
