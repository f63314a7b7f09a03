/**
 * A replica whose node stopped reporting (its kubelet cut off): the pod's phase Unknown (older node
 * controllers, or any writer that cannot reach the kubelet), status.reason NodeLost (Kubernetes 1.5-1.12),
 * or, as today's node lifecycle controller leaves it, Running and marked not Ready with its container
 * still ready. Reported as it was (running if it had run), saying its node is not reporting, never as
 * starting again; once Kubernetes evicts it (after 300 s) and it goes, an interruption, not the job's
 * failure. The real client against the fake API server; the controllers' writes made in its store.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { podName } from '../../src/cloud/kubernetes/names.ts';
import { TRANSIENT_CREATE_LIMIT_MS, waitingOf } from '../../src/cloud/kubernetes/create-errors.ts';
import type { Executor, ReplicaStatus } from '../../src/service/ports.ts';
import type { KubeObject } from '../fakes/kube-api/index.ts';
import {
  fakeKubeCluster,
  jobOnNodes,
  reconcileUntil,
  runningJob,
  untilWatched,
} from './kube-executor-fixture.ts';

const NS = 'boa-jobs';
const cluster = fakeKubeCluster(NS);
const POD = podName(7, 1, 0);
const job = () => jobOnNodes(7, 1, [cluster.nodes[0]!], { gpus: 1, env: () => ({}) });
const SILENT_AT = '2026-12-01T10:00:00.000Z';

/** The node's Ready condition Unknown, as the node lifecycle controller writes it after 40 s of silence. */
function nodeSilent(): void {
  cluster.fake.store.update('nodes', undefined, cluster.nodes[0]!, (node) => ({
    ...node,
    status: {
      ...node.status,
      conditions: [
        {
          type: 'Ready',
          status: 'Unknown',
          reason: 'NodeStatusUnknown',
          message: 'Kubelet stopped posting node status.',
          lastTransitionTime: SILENT_AT,
        },
      ],
    },
  }));
}

/** Writes what a controller writes of the pod (its status, its metadata), as the watch then delivers it. */
async function podWritten(
  executor: Executor,
  change: (pod: KubeObject) => KubeObject,
  seen: (pod: V1Pod) => boolean,
): Promise<void> {
  cluster.fake.store.update('pods', NS, POD, change);
  await untilWatched(executor, POD, (pod) => !!pod && seen(pod), 'the controller write');
}

async function rank0(executor: Executor): Promise<ReplicaStatus | undefined> {
  return (await executor.reconcile([job()])).find((s) => s.rank === 0);
}

/** Job 7's rank 0 running on the first node (runningJob), as a pass reports it. */
async function runningReplica(): Promise<Executor> {
  const { executor } = await runningJob(cluster);
  expect((await rank0(executor))?.phase).toBe('running');
  return executor;
}

const NOT_REPORTING = /^node ip-\S+ not reporting \(/;

describe('a replica whose node stopped reporting', () => {
  it('in phase Unknown after it ran: still running, saying so, not starting again', async () => {
    const executor = await runningReplica();
    nodeSilent();
    await podWritten(
      executor,
      (pod) => ({ ...pod, status: { ...pod.status, phase: 'Unknown' } }),
      (pod) => pod.status?.phase === 'Unknown',
    );
    const status = await rank0(executor);
    // Before the fix: 'starting', no reason; its job's start deadline then ran again (see below).
    expect(status).toMatchObject({ phase: 'running', reason: expect.stringMatching(NOT_REPORTING) });
    expect(status!.reason).toContain('pod phase Unknown');
    expect(status!.reason).toContain('evicts the pod (300 s by default)');
    expect(status).not.toHaveProperty('interrupted');
  });

  it('marked not Ready by the node lifecycle controller (phase Running, container ready): running, saying so', async () => {
    const executor = await runningReplica();
    nodeSilent();
    await podWritten(
      executor,
      (pod) => ({
        ...pod,
        status: {
          ...pod.status,
          conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: SILENT_AT }],
        },
      }),
      (pod) => !!pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'False'),
    );
    const status = await rank0(executor);
    expect(status).toMatchObject({ phase: 'running', reason: expect.stringMatching(NOT_REPORTING) });
    expect(status!.reason).toContain(`marked not Ready by the node controller since ${SILENT_AT}`);
  });

  it('in phase Unknown before it started, or Pending with reason NodeLost: starting, saying why', async () => {
    const executor = cluster.executor();
    cluster.fake.kubelet.setNodeReady(cluster.nodes[0]!, false);
    await reconcileUntil(executor, [job()], () => cluster.fake.pods(NS).length === 1, 'the pod made');
    await untilWatched(executor, POD, (pod) => !!pod, 'the pod');
    nodeSilent();
    await podWritten(
      executor,
      (pod) => ({ ...pod, status: { phase: 'Unknown' } }),
      (pod) => pod.status?.phase === 'Unknown',
    );
    const unknown = await rank0(executor);
    expect(unknown).toMatchObject({ phase: 'starting', reason: expect.stringMatching(NOT_REPORTING) });
    expect(unknown!.reason).toContain('pod phase Unknown');

    const lost = 'Node ip-10-0-0-1.ec2.internal which was running pod train-7-1-0 is unresponsive';
    await podWritten(
      executor,
      (pod) => ({ ...pod, status: { phase: 'Pending', reason: 'NodeLost', message: lost } }),
      (pod) => pod.status?.reason === 'NodeLost',
    );
    const nodeLost = await rank0(executor);
    expect(nodeLost).toMatchObject({ phase: 'starting', reason: expect.stringMatching(NOT_REPORTING) });
    expect(nodeLost!.reason).toContain(`NodeLost: ${lost}`);
  });

  it('evicted in phase Unknown before it started: stopped from outside at once, not a plain stop waiting for the deadline', async () => {
    const executor = cluster.executor();
    cluster.fake.kubelet.setNodeReady(cluster.nodes[0]!, false);
    await reconcileUntil(executor, [job()], () => cluster.fake.pods(NS).length === 1, 'the pod made');
    nodeSilent();
    cluster.fake.store.update('pods', NS, POD, (pod) => ({ ...pod, status: { phase: 'Unknown' } }));
    cluster.fake.store.markTerminating('pods', NS, POD, 30);
    await untilWatched(executor, POD, (pod) => !!pod?.metadata?.deletionTimestamp, 'the eviction');
    const status = await rank0(executor);
    // Before the fix: { phase: 'stopping' } alone, the job held until its start deadline failed it.
    expect(status).toMatchObject({
      phase: 'stopping',
      reason: 'deleted before it started',
      interrupted: true,
      ranForMs: 0,
    });
  });

  it('evicted by the taint manager after it ran, then gone: an interruption, never the job failing', async () => {
    const executor = await runningReplica();
    nodeSilent();
    await podWritten(
      executor,
      (pod) => ({ ...pod, status: { ...pod.status, phase: 'Unknown' } }),
      (pod) => pod.status?.phase === 'Unknown',
    );
    expect((await rank0(executor))?.phase).toBe('running');
    // 300 s on: the taint eviction marks it and deletes it; no kubelet confirms, so it stays Terminating.
    cluster.fake.store.update('pods', NS, POD, (pod) => ({
      ...pod,
      status: {
        ...pod.status,
        conditions: [
          ...(pod.status?.conditions ?? []),
          {
            type: 'DisruptionTarget',
            status: 'True',
            reason: 'DeletionByTaintManager',
            message: 'Taint manager: deleting due to NoExecute taint',
          },
        ],
      },
    }));
    cluster.fake.store.markTerminating('pods', NS, POD, 30);
    await untilWatched(executor, POD, (pod) => !!pod?.metadata?.deletionTimestamp, 'the eviction');
    const stopping = await rank0(executor);
    expect(stopping).toMatchObject({ phase: 'stopping', interrupted: true });
    expect(stopping!.reason).toContain('DeletionByTaintManager');
    // The node removed, the pod collected: reported interrupted (resumed), not failed for the job.
    cluster.fake.store.remove('pods', NS, POD);
    await untilWatched(executor, POD, (pod) => pod === undefined, 'the pod gone');
    const gone = await rank0(executor);
    expect(gone).toMatchObject({ phase: 'failed', interrupted: true });
    expect(gone).not.toHaveProperty('notRestartable');
  });

  it('waiting in a passing create error when its node went silent: not failed when the 180 s are up', async () => {
    let now = Date.parse('2026-12-01T09:55:00Z');
    const executor = cluster.executor({}, { now: () => now });
    cluster.fake.kubelet.setNodeReady(cluster.nodes[0]!, false);
    await reconcileUntil(executor, [job()], () => cluster.fake.pods(NS).length === 1, 'the pod made');
    cluster.fake.kubelet.waitOn(POD, 'CreateContainerError', 'context deadline exceeded');
    await untilWatched(executor, POD, (pod) => !!waitingOf(pod ?? {}), 'the create error');
    expect(await rank0(executor)).toMatchObject({ phase: 'starting' });
    nodeSilent();
    await podWritten(
      executor,
      (pod) => ({ ...pod, status: { ...pod.status, phase: 'Unknown' } }),
      (pod) => pod.status?.phase === 'Unknown',
    );
    now += TRANSIENT_CREATE_LIMIT_MS + 20_000;
    const status = await rank0(executor);
    // Before the fix: failed, '... (for 200 s: the runtime did not clear it)', a restart of the job.
    expect(status).toMatchObject({ phase: 'starting', reason: expect.stringMatching(NOT_REPORTING) });
  });
});
