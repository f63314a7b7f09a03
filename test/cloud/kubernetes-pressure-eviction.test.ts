import { CoreV1Api, type V1PodStatus } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { fakeKubeCluster, jobOnNodes, runningJob, untilWatched } from './kube-executor-fixture.ts';

const NS = 'eviction-jobs';
const cluster = fakeKubeCluster(NS);

/** The kubelet's eviction of a running pod, as it writes it (pkg/kubelet/eviction), its message given. */
async function evict(name: string, message: string) {
  const api = cluster.fake.kubeConfig().makeApiClient(CoreV1Api);
  const pod = await api.readNamespacedPod({ name, namespace: NS });
  const container = pod.status!.containerStatuses![0]!;
  const startedAt = new Date(container.state!.running!.startedAt!);
  const finishedAt = new Date(startedAt.getTime() + 300_000);
  const status: V1PodStatus = {
    ...pod.status,
    phase: 'Failed',
    reason: 'Evicted',
    message,
    conditions: [
      ...(pod.status!.conditions ?? []),
      {
        type: 'DisruptionTarget',
        status: 'True',
        reason: 'TerminationByKubelet',
        message,
        lastTransitionTime: finishedAt,
      },
    ],
    containerStatuses: [
      {
        ...container,
        ready: false,
        state: { terminated: { exitCode: 137, reason: 'Error', startedAt, finishedAt } },
      },
    ],
  };
  await api.replaceNamespacedPodStatus({ name, namespace: NS, body: { ...pod, status } });
}

/** Job 7 running (generation 1 on the first node), then evicted so: what the next pass says of it. */
async function rank0AfterEviction(message: string) {
  const { executor, pod } = await runningJob(cluster);
  await evict(pod, message);
  await untilWatched(executor, pod, (p) => p?.status?.reason === 'Evicted', 'the eviction');
  const job = jobOnNodes(7, 1, [cluster.nodes[0]!], { gpus: 1, env: () => ({}) });
  const statuses = await executor.reconcile([job]);
  return statuses.find((s) => s.jobId === 7 && s.rank === 0)!;
}

const LOW = 'The node was low on resource: memory. Threshold quantity: 100Mi, available: 92340Ki. ';

describe('a pod its node evicts under pressure', () => {
  it('for its own memory use (above its request): a failure, counted, saying to set workload.memoryPerGpu, not an interruption resumed for ever', async () => {
    const own = `${LOW}Container train was using 15032812Ki, request is 0, has larger consumption of memory. `;
    const status = await rank0AfterEviction(own);
    expect(status).toMatchObject({ phase: 'failed', exitCode: 137, ranForMs: 300_000 });
    expect(status.interrupted).toBeUndefined();
    expect(status.reason).toMatch(
      /^Evicted: its replica used more memory than it requested .*set workload\.memoryPerGpu/,
    );
    expect(status.reason).toContain('Container train was using 15032812Ki, request is 0');
  });

  it('for its own disk use: a failure, saying to write to the checkpoint volume or S3', async () => {
    const disk =
      'The node was low on resource: ephemeral-storage. Threshold quantity: 10Gi, available: 9Gi. ' +
      'Container train was using 80Gi, request is 0, has larger consumption of ephemeral-storage. ';
    const status = await rank0AfterEviction(disk);
    expect(status).toMatchObject({ phase: 'failed', exitCode: 137 });
    expect(status.interrupted).toBeUndefined();
    expect(status.reason).toMatch(
      /^Evicted: its replica wrote more to its node's disk .*checkpoint volume claim or S3/,
    );
  });

  it('for what others used (no container of its own named): interrupted, as before', async () => {
    const status = await rank0AfterEviction(LOW);
    expect(status).toMatchObject({ phase: 'failed', interrupted: true });
    expect(status.reason).toContain('TerminationByKubelet');
  });
});
