/**
 * A job's next generation starts only once its older pods are gone. One stuck Terminating on a Ready node
 * (a volume that does not unmount, a GPU process the kubelet cannot kill) holds it back: its replicas are
 * reported starting, naming the pod they wait for, so the start deadline's reason says why.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createKubernetesExecutor } from '../../src/cloud/kubernetes/index.ts';
import { podName } from '../../src/cloud/kubernetes/names.ts';
import type { Executor, ReplicaStatus } from '../../src/service/ports.ts';
import { type FakeKubeApi, startFakeKubeApi } from '../fakes/kube-api/index.ts';
import { captureLogs } from './fake-time.ts';
import { jobOnNodes, reconcileUntil } from './kube-executor-fixture.ts';

const NS = 'boa-jobs';
/** Long enough that the fake's kubelet (which stops a pod when its grace runs out, in real time) never does. */
const GRACE_S = 3600;
const OLD = podName(7, 1, 0);
const NEW = podName(7, 2, 0);

let fake: FakeKubeApi;
let nodes: string[];
let t: number;
let executor: Executor;

beforeEach(async () => {
  t = Date.now();
  fake = await startFakeKubeApi({ now: () => t, kubelet: { autoStartMs: 0 } });
  nodes = [fake.kubelet.addNode(), fake.kubelet.addNode()].map((n) => n.metadata.name);
  executor = createKubernetesExecutor(
    { terminationGraceSeconds: GRACE_S, kubernetes: { namespace: NS } },
    captureLogs().logger,
    { instanceId: 'test-boa', kubeConfig: fake.kubeConfig(), now: () => t, sleep: async () => undefined },
  );
});
afterEach(async () => {
  await executor.close();
  await fake.close();
});

const job = (generation: number, node: string) =>
  jobOnNodes(7, generation, [node], { gpus: 1, env: () => ({}) });
const pod = (name: string) => fake.pods(NS).find((p) => p.metadata.name === name);
const newReplica = (statuses: readonly ReplicaStatus[]) =>
  statuses.find((s) => s.jobId === 7 && s.generation === 2 && s.rank === 0);

describe('a generation held back by an older pod of its job', () => {
  it('is reported starting, naming the pod it waits for and, once past its grace, how long and where to look', async () => {
    await reconcileUntil(executor, [job(1, nodes[0]!)], () => pod(OLD)?.status?.phase === 'Running', 'g1');
    await reconcileUntil(executor, [job(2, nodes[1]!)], () => !!pod(OLD)?.metadata.deletionTimestamp, 'stop');

    const stopping = newReplica(await executor.reconcile([job(2, nodes[1]!)]));
    expect(stopping).toMatchObject({ phase: 'starting', node: nodes[1] });
    expect(stopping?.reason).toContain(`${OLD} on node ${nodes[0]} (stopping)`);

    // Its grace over, the node Ready: its kubelet has not stopped it, and boa does not force it.
    t += (GRACE_S + 600) * 1000;
    const stuck = newReplica(await executor.reconcile([job(2, nodes[1]!)]));
    expect(stuck?.phase).toBe('starting');
    expect(stuck?.reason).toContain(`${OLD} on node ${nodes[0]} (600 s past its grace period`);
    expect(stuck?.reason).toContain(`kubectl -n ${NS} describe pod ${OLD}`);
    expect(pod(NEW)).toBeUndefined();

    // Once it goes, the new pod is made and reports itself, the wait no longer said.
    fake.kubelet.finishTermination(OLD);
    let started: ReplicaStatus | undefined;
    for (let i = 0; i < 300 && started?.phase !== 'running'; i++) {
      started = newReplica(await executor.reconcile([job(2, nodes[1]!)]));
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(started).toMatchObject({ phase: 'running', node: nodes[1] });
    expect(started?.reason).toBeUndefined();
  }, 60_000);
});
