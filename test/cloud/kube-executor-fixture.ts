import type { V1Pod } from '@kubernetes/client-node';
import { type Logger, pino } from 'pino';
import { afterEach, beforeEach } from 'vitest';
import { createKubernetesExecutor, type KubernetesExecutorConfig } from '../../src/cloud/kubernetes/index.ts';
import { podName } from '../../src/cloud/kubernetes/names.ts';
import type { DesiredJob, Executor } from '../../src/service/ports.ts';
import { type FakeKubeApi, startFakeKubeApi } from '../fakes/kube-api/index.ts';

/**
 * For each test: a fake API server whose kubelet starts pods at once, with two GPU nodes; `executor()`
 * makes Kubernetes executors on it (backoff recorded in `delays`, not waited: tests skip time), closed
 * after the test with the server; their log is silent unless `deps.logger` says otherwise. All are one boa (instance id `test-boa`, which holds the namespace's
 * claim) unless `deps.instanceId` says otherwise.
 */
export function fakeKubeCluster(namespace: string) {
  const cluster = {
    fake: undefined as unknown as FakeKubeApi,
    nodes: [] as string[],
    delays: [] as number[],
    executors: [] as Executor[],
    executor(
      options: Partial<KubernetesExecutorConfig> = {},
      deps: { logArchiveDir?: string; instanceId?: string; now?: () => number; logger?: Logger } = {},
    ): Executor {
      const { logger = pino({ level: 'silent' }), ...rest } = deps;
      const created = createKubernetesExecutor(
        { terminationGraceSeconds: 60, kubernetes: { namespace, ...options } },
        logger,
        {
          instanceId: 'test-boa',
          kubeConfig: cluster.fake.kubeConfig(),
          sleep: async (ms) => void cluster.delays.push(ms),
          random: () => 0.5,
          ...rest,
        },
      );
      cluster.executors.push(created);
      return created;
    },
  };
  beforeEach(async () => {
    const fake = (cluster.fake = await startFakeKubeApi({ kubelet: { autoStartMs: 0 } }));
    cluster.nodes = [fake.kubelet.addNode(), fake.kubelet.addNode()].map((n) => n.metadata.name);
    cluster.delays = [];
  });
  afterEach(async () => {
    for (const e of cluster.executors.splice(0)) await e.close();
    await cluster.fake.close();
  });
  return cluster;
}

/** A desired job with a replica per node (rank = index), each given `gpus` and boa's `env` (its token). */
export function jobOnNodes(
  jobId: number,
  generation: number,
  nodes: readonly string[],
  options: { gpus: number; env: (rank: number) => Record<string, string> },
): DesiredJob {
  return {
    jobId,
    generation,
    replicas: nodes.map((node, rank) => ({
      jobId,
      generation,
      rank,
      node,
      gpus: options.gpus,
      workload: { image: 'repo/train:1', command: ['python3', 'train.py'] },
      env: options.env(rank),
    })),
  };
}

/** Reconciles `desired` until `ok` holds (the executor's cache catching up with the fake), or fails. */
export async function reconcileUntil(
  executor: Executor,
  desired: DesiredJob[],
  ok: () => boolean,
  what: string,
): Promise<void> {
  for (let i = 0; i < 300; i++) {
    await executor.reconcile(desired);
    if (ok()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/**
 * Waits until the executor's watch has brought its pod cache to a version of `name` for which `holds`
 * is true (undefined: the pod gone): what happens to a pod between two passes is seen by the watch
 * alone, and a fixed pause missed it under load (a CI run beside others).
 */
export async function untilWatched(
  executor: Executor,
  name: string,
  holds: (pod: V1Pod | undefined) => boolean,
  what: string,
): Promise<void> {
  // The cache is the executor's own (private): the watch's effect is what these tests are about.
  const cache = (executor as unknown as { pods: { get(name: string): V1Pod | undefined } }).pods;
  for (let i = 0; i < 1000; i++) {
    if (holds(cache.get(name))) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`the executor's watch never saw ${what}`);
}

/**
 * A new executor on `cluster` running job 7's generation 1 on the first node: reconciled until its
 * replica runs (at most 100 passes, 20 ms apart); its pod's name with it.
 */
export async function runningJob(cluster: ReturnType<typeof fakeKubeCluster>) {
  const executor = cluster.executor();
  const job = jobOnNodes(7, 1, [cluster.nodes[0]!], { gpus: 1, env: () => ({}) });
  for (let i = 0; i < 100; i++) {
    const statuses = await executor.reconcile([job]);
    if (statuses.some((s) => s.phase === 'running')) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  return { executor, pod: podName(7, 1, 0) };
}

/** A pod boa does not own, Running on `node` and holding `gpus` GPUs there (the fake's kubelet counts it). */
export function podHoldingGpus(fake: FakeKubeApi, namespace: string, node: string, gpus: number): void {
  fake.store.create('pods', namespace, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'someone-else' } as never,
    spec: {
      nodeName: node,
      containers: [{ name: 'c', image: 'i', resources: { limits: { 'nvidia.com/gpu': String(gpus) } } }],
    },
    status: { phase: 'Running' },
  });
}
