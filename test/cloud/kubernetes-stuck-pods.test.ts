/**
 * A pod boa deleted on a node whose kubelet is gone (NotReady, or the Node deleted before the pod
 * garbage collector ran) stays Terminating for ever: only its kubelet confirms a graceful stop. The job's
 * next generation starts only once the old pods are gone, so boa force-deletes such a pod (grace 0) a
 * margin past its grace; never one on a Ready node, whose kubelet will finish it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createKubernetesExecutor } from '../../src/cloud/kubernetes/index.ts';
import { podName } from '../../src/cloud/kubernetes/names.ts';
import { FORCE_DELETE_MARGIN_MS, NOT_READY_FORCE_MS } from '../../src/cloud/kubernetes/stuck-pods.ts';
import type { Executor } from '../../src/service/ports.ts';
import { type FakeKubeApi, type RequestRecord, startFakeKubeApi } from '../fakes/kube-api/index.ts';
import { captureLogs } from './fake-time.ts';
import { jobOnNodes, reconcileUntil } from './kube-executor-fixture.ts';

const NS = 'boa-jobs';
const GRACE_S = 60;
const OLD = podName(7, 1, 0);
const NEW = podName(7, 2, 0);

let fake: FakeKubeApi;
let nodes: string[];
let t: number;
let executor: Executor;
let logs: ReturnType<typeof captureLogs>;
let delays: number[];

beforeEach(async () => {
  t = Date.now();
  fake = await startFakeKubeApi({ now: () => t, kubelet: { autoStartMs: 0 } });
  nodes = [fake.kubelet.addNode(), fake.kubelet.addNode()].map((n) => n.metadata.name);
  logs = captureLogs();
  delays = [];
  executor = createKubernetesExecutor(
    { terminationGraceSeconds: GRACE_S, kubernetes: { namespace: NS } },
    logs.logger,
    {
      instanceId: 'test-boa',
      kubeConfig: fake.kubeConfig(),
      now: () => t,
      sleep: async (ms) => void delays.push(ms),
      random: () => 0.5,
    },
  );
});
afterEach(async () => {
  await executor.close();
  await fake.close();
});

const job = (generation: number, node: string) =>
  jobOnNodes(7, generation, [node], { gpus: 1, env: () => ({}) });
const pod = (name: string) => fake.pods(NS).find((p) => p.metadata.name === name);
const isForceDelete = (r: Pick<RequestRecord, 'method' | 'query'>) =>
  r.method === 'DELETE' && r.query.get('gracePeriodSeconds') === '0';
const forceDeletes = () => fake.requests.filter(isForceDelete).length;

/** Generation 1 running on the first node, then rescaled onto the second: its pod is Terminating. */
async function oldPodTerminating(): Promise<void> {
  await reconcileUntil(executor, [job(1, nodes[0]!)], () => pod(OLD)?.status?.phase === 'Running', 'g1');
  await executor.reconcile([job(2, nodes[1]!)]);
  expect(pod(OLD)?.metadata.deletionTimestamp).toBeTruthy();
  expect(pod(OLD)?.metadata.deletionGracePeriodSeconds).toBe(GRACE_S);
}

/** Passes `by` ms later, the old pod's kubelet confirming nothing. */
async function passesAt(by: number, count = 3): Promise<void> {
  t += by;
  for (let i = 0; i < count; i++) {
    await executor.reconcile([job(2, nodes[1]!)]);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const PAST = GRACE_S * 1000 + FORCE_DELETE_MARGIN_MS + 1000;

/** The node's kubelet stopped reporting `msAgo` ago: its Ready condition False since then. */
function nodeDownFor(name: string, msAgo: number): void {
  t -= msAgo;
  fake.kubelet.setNodeReady(name, false);
  t += msAgo;
}

describe('a pod stuck Terminating', () => {
  it('on a node not Ready for 5 minutes is force-deleted past its grace and the margin, and the next generation starts', async () => {
    await oldPodTerminating();
    nodeDownFor(nodes[0]!, NOT_READY_FORCE_MS);
    await passesAt(5_000);
    expect(pod(OLD)?.metadata.deletionTimestamp).toBeTruthy();
    expect(pod(NEW)).toBeUndefined();
    expect(forceDeletes()).toBe(0);
    // Past the grace and the margin.
    t += PAST;
    await reconcileUntil(executor, [job(2, nodes[1]!)], () => pod(NEW)?.status?.phase === 'Running', 'g2');
    expect(pod(OLD)).toBeUndefined();
    expect(forceDeletes()).toBe(1);
    const forced = logs.lines.filter((l) => l.event === 'kube.pod.force-deleted');
    expect(forced).toEqual([
      expect.objectContaining({
        pod: OLD,
        node: nodes[0],
        nodeState: 'Ready=False for 426 s',
        terminatingSeconds: 126,
      }),
    ]);
  }, 30_000);

  it('on a Ready node is left to its kubelet, however long it takes', async () => {
    await oldPodTerminating();
    await passesAt(PAST * 10);
    expect(pod(OLD)?.metadata.deletionTimestamp).toBeTruthy();
    expect(forceDeletes()).toBe(0);
    expect(pod(NEW)).toBeUndefined();
    // Its kubelet finishes it: the next generation starts.
    fake.kubelet.finishTermination(OLD);
    await reconcileUntil(executor, [job(2, nodes[1]!)], () => pod(NEW)?.status?.phase === 'Running', 'g2');
    expect(logs.events()).not.toContain('kube.pod.force-deleted');
  }, 30_000);

  it('on a NotReady node is not forced before its grace and the margin are over', async () => {
    await oldPodTerminating();
    nodeDownFor(nodes[0]!, NOT_READY_FORCE_MS);
    await passesAt(GRACE_S * 1000 + FORCE_DELETE_MARGIN_MS - 1000);
    expect(pod(OLD)?.metadata.deletionTimestamp).toBeTruthy();
    expect(forceDeletes()).toBe(0);
    await passesAt(2000, 1);
    expect(forceDeletes()).toBe(1);
    expect(pod(OLD)).toBeUndefined();
  }, 30_000);

  it('on a node not Ready for under 5 minutes is not forced (its kubelet may only be cut off), then is', async () => {
    await oldPodTerminating();
    fake.kubelet.setNodeReady(nodes[0]!, false);
    // Past the grace and the margin, the node not Ready for 2 minutes: its container may still run.
    await passesAt(PAST);
    expect(forceDeletes()).toBe(0);
    expect(pod(OLD)?.metadata.deletionTimestamp).toBeTruthy();
    await passesAt(NOT_READY_FORCE_MS - PAST - 2000, 1);
    expect(forceDeletes()).toBe(0);
    await passesAt(3000, 1);
    expect(forceDeletes()).toBe(1);
    expect(pod(OLD)).toBeUndefined();
  }, 30_000);

  it('whose Node is gone (the pod garbage collector not run) is force-deleted', async () => {
    await oldPodTerminating();
    fake.kubelet.removeNode(nodes[0]!, { collectPods: false });
    await passesAt(5_000);
    expect(pod(OLD)?.metadata.deletionTimestamp).toBeTruthy();
    t += PAST;
    await reconcileUntil(executor, [job(2, nodes[1]!)], () => pod(NEW)?.status?.phase === 'Running', 'g2');
    expect(forceDeletes()).toBe(1);
    expect(logs.lines.find((l) => l.event === 'kube.pod.force-deleted')).toMatchObject({
      pod: OLD,
      node: nodes[0],
      nodeState: 'gone',
    });
  }, 30_000);

  it('is forced once: not again while a watch behind still lists it', async () => {
    await oldPodTerminating();
    nodeDownFor(nodes[0]!, NOT_READY_FORCE_MS);
    // Its DELETED event never comes: the cache lists the pod until the next relist.
    fake.stallWatches();
    await passesAt(PAST);
    expect(pod(OLD)).toBeUndefined();
    expect(forceDeletes()).toBe(1);
    expect(logs.events().filter((e) => e === 'kube.pod.force-deleted')).toHaveLength(1);
  }, 30_000);

  it('a force delete that fails once (a 500) is retried within the pass', async () => {
    await oldPodTerminating();
    nodeDownFor(nodes[0]!, NOT_READY_FORCE_MS);
    fake.faults.inject({ status: 500, count: 1, match: isForceDelete });
    t += PAST;
    await executor.reconcile([job(2, nodes[1]!)]);
    expect(fake.faults.pending()).toBe(0);
    expect(delays.length).toBeGreaterThan(0);
    expect(pod(OLD)).toBeUndefined();
    expect(fake.requests.filter(isForceDelete).map((r) => r.status)).toEqual([500, 200]);
  }, 30_000);

  it('a force delete refused past the retries fails only its step; the next pass sends it again', async () => {
    await oldPodTerminating();
    nodeDownFor(nodes[0]!, NOT_READY_FORCE_MS);
    fake.faults.inject({ status: 429, count: 4, match: isForceDelete });
    t += PAST;
    await expect(executor.reconcile([job(2, nodes[1]!)])).resolves.toBeDefined();
    expect(pod(OLD)?.metadata.deletionTimestamp).toBeTruthy();
    expect(logs.events()).toContain('kube.reconcile.failed');
    expect(logs.events()).not.toContain('kube.pod.force-deleted');
    await reconcileUntil(executor, [job(2, nodes[1]!)], () => pod(NEW)?.status?.phase === 'Running', 'g2');
    expect(fake.requests.filter(isForceDelete).map((r) => r.status)).toEqual([429, 429, 429, 429, 200]);
    expect(logs.events().filter((e) => e === 'kube.pod.force-deleted')).toHaveLength(1);
  }, 30_000);

  it('a force delete refused 409 (its uid precondition: a newer pod has the name) is done, not retried', async () => {
    await oldPodTerminating();
    nodeDownFor(nodes[0]!, NOT_READY_FORCE_MS);
    fake.faults.inject({ status: 409, count: 1, match: isForceDelete });
    t += PAST;
    await executor.reconcile([job(2, nodes[1]!)]);
    await executor.reconcile([job(2, nodes[1]!)]);
    expect(fake.requests.filter(isForceDelete).map((r) => r.status)).toEqual([409]);
    expect(delays).toEqual([]);
    expect(logs.events()).not.toContain('kube.reconcile.failed');
  }, 30_000);
});
