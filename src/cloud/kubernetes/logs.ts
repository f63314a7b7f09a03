import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import type { ReplicaLog, ReplicaLogQuery } from '../../service/ports.ts';
import { archivedTail } from './archived-log.ts';
import type { RetryContext } from '../retry.ts';
import { identityOf, podName } from './names.ts';
import { kindOf, withKubeRetry } from './retry.ts';

/** As the local executor reads at most a log's last MiB. */
const LOG_LIMIT_BYTES = 1 << 20;

/**
 * The generations whose log to read, newest first: the one asked for, else those of `pods` (boa's, from
 * its cache) for the job and rank.
 */
export function logGenerations(
  pods: readonly V1Pod[],
  { jobId, rank, generation }: Pick<ReplicaLogQuery, 'jobId' | 'rank' | 'generation'>,
): number[] {
  if (generation !== undefined) return [generation];
  return pods
    .map((pod) => identityOf(pod.metadata?.labels))
    .filter((id) => id !== undefined && id.jobId === jobId && id.rank === rank)
    .map((id) => id!.generation)
    .sort((a, b) => b - a);
}

/** A log read boa's role may not make, naming the permission it lacks. */
export function logRefused(pod: string, namespace: string, cause: unknown): Error {
  return new Error(
    `reading pod ${pod}'s log was refused (403): boa's role in ${namespace} needs get on pods/log (infra/k8s/jobs-rbac.ts)`,
    { cause },
  );
}

/**
 * A replica's pod log (`kubectl logs`): of the generation asked for, else of the newest of `pods` (boa's,
 * from its cache) for that job and rank whose pod still exists. A container not started yet has written
 * nothing; a refusal says which permission is missing. `endedKept`: the log boa kept once the container
 * had ended (stamped), answered from when the API server cannot give it (its kubelet unreachable: the
 * node died, or was scaled in and its pods not yet collected).
 */
export async function readPodLog(
  api: CoreV1Api,
  namespace: string,
  retry: RetryContext,
  pods: readonly V1Pod[],
  { jobId, rank, generation, tailLines }: ReplicaLogQuery,
  endedKept: (generation: number) => string | undefined = () => undefined,
): Promise<ReplicaLog | undefined> {
  for (const g of logGenerations(pods, { jobId, rank, generation })) {
    const name = podName(jobId, g, rank);
    try {
      const text = await withKubeRetry(
        'read pod log',
        () => api.readNamespacedPodLog({ name, namespace, tailLines, limitBytes: LOG_LIMIT_BYTES }),
        retry,
      );
      return { generation: g, text };
    } catch (error) {
      // 400: its container has not started yet (Pending, pulling), so it has written nothing.
      if (statusOf(error) === 400) return { generation: g, text: '' };
      if (statusOf(error) === 403) throw logRefused(name, namespace, error);
      const kind = kindOf(error);
      // Found in review: `boa jobs logs` of a job that had just failed waited out the retries, then
      // failed, while its node was going away, though boa held the whole log.
      const kept = kind === 'transient' || kind === 'throttling' ? endedKept(g) : undefined;
      if (kept !== undefined) return { generation: g, text: archivedTail(kept, tailLines) };
      if (kind !== 'not-found') throw error;
    }
  }
  return undefined;
}

/** The HTTP status of a failed call, seen through the retry layer's wrapper (its cause). */
export function statusOf(error: unknown): number | undefined {
  const code = (e: unknown) => (e as { code?: unknown } | undefined)?.code;
  const status = code(error) ?? code((error as { cause?: unknown } | undefined)?.cause);
  return typeof status === 'number' ? status : undefined;
}
