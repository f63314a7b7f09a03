import { pino } from 'pino';
import { createKubernetesExecutor, podName } from '../../src/cloud/kubernetes/index.ts';
import { type KubeObject, startFakeKubeApi } from '../fakes/kube-api/index.ts';
import { type ExecutorHarness, executorContract, type ReplicaRef } from './executor-contract.ts';

export const JOBS_NAMESPACE = 'boa-jobs';

const nameOf = (r: ReplicaRef) => podName(r.jobId, r.generation, r.rank);

function envOf(pod: KubeObject): Record<string, string> {
  const env = (pod.spec?.containers?.[0]?.env ?? []) as { name: string; value: string }[];
  return Object.fromEntries(env.map((e) => [e.name, e.value]));
}

/**
 * Pods over the in-process fake API server, through the real @kubernetes/client-node. The fake kubelet
 * starts pods at once; a container exits on SIGTERM (graceful deletion) unless its workload says
 * IGNORE_TERM=1, in which case it is killed when the grace period runs out, as a kubelet would.
 */
export async function kubernetesHarness(): Promise<ExecutorHarness> {
  const fake = await startFakeKubeApi({ kubelet: { autoStartMs: 0 } });
  const nodes = [fake.kubelet.addNode(), fake.kubelet.addNode()].map((n) => n.metadata.name);
  const starts = new Map<string, Record<string, string>[]>();
  const terminations = new Map<string, number>();
  const timers = new Set<NodeJS.Timeout>();
  const subscription = fake.store.subscribe(fake.store.currentVersion(), (event) => {
    if (event.resource !== 'pods' || event.type !== 'MODIFIED') return;
    const { object: pod, previous } = event;
    const name = pod.metadata.name;
    if (pod.status?.phase === 'Running' && previous?.status?.phase === 'Pending') {
      starts.set(name, [...(starts.get(name) ?? []), envOf(pod)]);
    }
    if (pod.metadata.deletionTimestamp && !previous?.metadata.deletionTimestamp) {
      terminations.set(name, (terminations.get(name) ?? 0) + 1);
      if (envOf(pod).IGNORE_TERM !== '1') {
        const timer = setTimeout(() => {
          timers.delete(timer);
          // A container that exits 0 on SIGTERM ends Succeeded, and the terminating pod then goes.
          if (envOf(pod).TERM_EXIT_CODE === '0') fake.kubelet.exit(name, 0);
          else fake.kubelet.finishTermination(name);
        }, 20);
        timers.add(timer);
      }
    }
  });
  if (subscription === 'expired') throw new Error('fake kube-api: history expired at start');
  const live = (r: ReplicaRef) =>
    fake
      .pods(JOBS_NAMESPACE)
      .filter((p) => p.metadata.name === nameOf(r) && !['Succeeded', 'Failed'].includes(p.status?.phase));
  return {
    nodes,
    create: async ({ terminationGraceSeconds }) =>
      createKubernetesExecutor(
        // No retention of ended pods for their logs (its own test): the contract's "removed" at once.
        { terminationGraceSeconds, kubernetes: { namespace: JOBS_NAMESPACE, endedPodRetentionSeconds: 0 } },
        pino({ level: 'silent' }),
        { instanceId: 'test-boa', kubeConfig: fake.kubeConfig() },
      ),
    workload: (options = {}) => ({
      image: 'registry.example/boa-replica:1',
      command: ['python3', 'train.py'],
      env: {
        IGNORE_TERM: options.ignoreTerm ? '1' : '0',
        TERM_EXIT_CODE: options.termExitsZero ? '0' : '143',
      },
    }),
    exit: async (r, code) => void fake.kubelet.exit(nameOf(r), code),
    say: async (r, text) => fake.kubelet.writeLog(nameOf(r), text),
    // Killed from outside: the pod is force-deleted (grace 0), leaving no exit to report.
    kill: async (r) => {
      const pod = fake.kubelet.pod(nameOf(r));
      fake.store.remove('pods', pod.metadata.namespace, pod.metadata.name);
    },
    // Deleted by someone else with its grace period (a drain): SIGTERM, then the container exits.
    interrupt: async (r) => {
      const pod = fake.kubelet.pod(nameOf(r));
      fake.store.markTerminating('pods', pod.metadata.namespace, pod.metadata.name, 30);
    },
    starts: async (r) => starts.get(nameOf(r)) ?? [],
    terminations: async (r) => terminations.get(nameOf(r)) ?? 0,
    running: async (r) => live(r).length,
    removeNode: async (node) => fake.kubelet.removeNode(node),
    restoreNode: async (node) => void fake.kubelet.addNode({ name: node }),
    cleanup: async () => {
      subscription.stop();
      for (const timer of timers) clearTimeout(timer);
      await fake.close();
    },
  };
}

executorContract('Kubernetes pods over the fake API server', kubernetesHarness, { nodesGo: true });
