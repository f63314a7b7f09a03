import type { V1Pod } from '@kubernetes/client-node';
import type { ReplicaStatus } from '../../service/ports.ts';
import { admissionRejected } from './pods.ts';

/** A turned-away pod is created again at most this often while nothing of boa's stops on its node. */
export const READMIT_EVERY_MS = 10_000;
/** Turned away this often with nothing of boa's stopping there: a refusal that does not pass, a failure. */
export const MAX_UNEXPLAINED_READMITS = 3;

/** A pod still terminating this long after its grace period ended is stuck: it explains nothing more. */
export const STUCK_TERMINATING_MS = 5 * 60_000;

const isTerminal = (pod: V1Pod) => pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';

/** Terminating within its grace period (deletionTimestamp is when the grace ends), give or take a while. */
function stopping(pod: V1Pod, now: number): boolean {
  const until = pod.metadata?.deletionTimestamp;
  if (!until || isTerminal(pod)) return false;
  return now <= new Date(until).getTime() + STUCK_TERMINATING_MS;
}

/**
 * Pods their node's kubelet turned away (pods.ts admissionRejected). Usually the GPUs are still held by
 * another job's pod giving them up within its grace period: the pod is removed, to be created again,
 * once nothing of boa's is terminating on that node. Turned away again and again with nothing of boa's
 * stopping there (the node has fewer GPUs than boa thinks, a taint, pressure that lasts), it is reported failed, so the job restarts
 * and fails as any failing job does instead of waiting forever.
 */
export class Readmissions {
  private readonly tried = new Map<string, { at: number; unexplained: number }>();

  /** The turned-away pods (of `wanted`, those boa still wants) to remove now. */
  toRemove(pods: readonly V1Pod[], wanted: readonly V1Pod[], now: number): V1Pod[] {
    const present = new Set(pods.map((p) => p.metadata?.name));
    for (const [name, record] of this.tried) {
      if (!present.has(name) && now - record.at > 10 * READMIT_EVERY_MS) this.tried.delete(name);
    }
    // A pod stuck terminating (a GPU process that cannot be killed) stops explaining refusals after a
    // while, so the readmission counts them and a job does not wait on that node forever.
    const stoppingOn = new Set(pods.filter((p) => stopping(p, now)).map((p) => p.spec?.nodeName));
    const out: V1Pod[] = [];
    for (const pod of wanted) {
      if (!admissionRejected(pod) || stoppingOn.has(pod.spec?.nodeName)) continue;
      const name = pod.metadata?.name ?? '';
      const record = this.tried.get(name);
      if (record && (now - record.at < READMIT_EVERY_MS || this.givenUp(name))) continue;
      this.tried.set(name, { at: now, unexplained: (record?.unexplained ?? 0) + 1 });
      if (!this.givenUp(name)) out.push(pod);
    }
    return out;
  }

  /** The pod's status, failed once its node has turned it away too often for no reason boa can see. */
  status(pod: V1Pod, status: ReplicaStatus): ReplicaStatus {
    const name = pod.metadata?.name ?? '';
    if (status.phase !== 'starting' || !admissionRejected(pod) || !this.givenUp(name)) return status;
    const hint =
      pod.status?.reason === 'OutOfnvidia.com/gpu' ? ': does it have the GPUs gpusPerNode says?' : '';
    return {
      ...status,
      phase: 'failed',
      reason:
        `${status.reason} (turned away ${MAX_UNEXPLAINED_READMITS + 1} times with nothing of boa's ` +
        `stopping on the node${hint})`,
    };
  }

  private givenUp(name: string): boolean {
    return (this.tried.get(name)?.unexplained ?? 0) > MAX_UNEXPLAINED_READMITS;
  }
}
