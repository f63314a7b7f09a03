import type { V1Pod } from '@kubernetes/client-node';
import type { ReplicaStatus } from '../../service/ports.ts';
import { silentNodeOf } from './silent-node.ts';

/**
 * CreateContainerError messages of a runtime too loaded to answer in time, which the kubelet retries
 * and which usually clear within a minute: a create that outlasted the kubelet's runtime request
 * timeout ("context deadline exceeded"), and its retry finding the name still held by that create
 * (containerd: "failed to reserve container name ... is reserved for ...", CRI-O: "name is reserved").
 * Any other CreateContainerError (no command, a mount the image cannot take) fails at once.
 */
const TRANSIENT_CREATE =
  /failed to reserve container name|name is reserved|context deadline exceeded|DeadlineExceeded/i;

/**
 * CreateContainerConfigError messages of a kubelet that has not yet read what the container's
 * environment needs from the API server, which it retries at its next sync of the pod: a kubelet just
 * started (a node boa scaled up moments ago, its pods bound there by nodeName) that has not listed the
 * Services yet ("services have not yet been read at least once, cannot construct envvars"), and its
 * cache of the job's token Secret not synced within its 1 s wait ("failed to sync secret cache: timed
 * out waiting for the condition") or not yet set up for the pod ('object "ns"/"name" not registered').
 * Failed at once, each restarted the job, counted against maxRestarts (found in review). Any other
 * (a Secret or key that is not there) fails at once.
 */
const TRANSIENT_CONFIG =
  /services have not yet been read at least once|failed to sync (?:secret|configmap) cache|object "[^"]*"\/"[^"]*" not registered/i;

/**
 * How long a pod may stay in a passing create error before its replica fails: past the kubelet's
 * runtime request timeout (2 min), so a create that outlasted it once has finished or given up. One
 * stuck longer (a reserved name containerd never frees, a kubelet that cannot reach the API server) is
 * failed: a restart makes new pods, whose names nothing holds, placed again.
 */
export const TRANSIENT_CREATE_LIMIT_MS = 180_000;

export function transientCreateError(reason: string | undefined, message: string | undefined): boolean {
  if (reason === 'CreateContainerError') return TRANSIENT_CREATE.test(message ?? '');
  return reason === 'CreateContainerConfigError' && TRANSIENT_CONFIG.test(message ?? '');
}

export const waitingOf = (pod: V1Pod) => pod.status?.containerStatuses?.[0]?.state?.waiting;

/**
 * Pods waiting in a passing create error (replicaStatusOf reports them starting, with the kubelet's
 * reason): each is failed once it has been seen so, pass after pass, for TRANSIENT_CREATE_LIMIT_MS.
 * The clock is in memory, as the start deadline's is: a restarted boa starts both again. The pod
 * holds no time of its own for it (a waiting state has none; the kubelet's Events, which boa's role
 * may not read, have), and a wait that lasts is still ended by any boa that runs for 180 s.
 */
export class CreateErrorWaits {
  /** Pod uid: when it was first seen in a passing CreateContainerError, without a pass in between out of it. */
  private readonly since = new Map<string, number>();

  /** Called once a pass with every pod listed: a pod gone or out of the error starts again at zero. */
  note(pods: readonly V1Pod[], now: number): void {
    const waiting = new Set<string>();
    for (const pod of pods) {
      const uid = pod.metadata?.uid;
      const state = waitingOf(pod);
      if (!uid || pod.metadata?.deletionTimestamp || !transientCreateError(state?.reason, state?.message))
        continue;
      // Its node silent, the error is only its last word: no kubelet is retrying, and failing it would
      // count the node's loss against the job (silent-node.ts). Its clock starts again once it reports.
      if (silentNodeOf(pod)) continue;
      waiting.add(uid);
      if (!this.since.has(uid)) this.since.set(uid, now);
    }
    for (const uid of this.since.keys()) if (!waiting.has(uid)) this.since.delete(uid);
  }

  /** The pod's status, failed once its passing CreateContainerError has lasted the limit. */
  status(pod: V1Pod, status: ReplicaStatus, now: number): ReplicaStatus {
    const since = this.since.get(pod.metadata?.uid ?? '');
    if (status.phase !== 'starting' || since === undefined || now - since < TRANSIENT_CREATE_LIMIT_MS)
      return status;
    const lasted = Math.round((now - since) / 1000);
    const who = waitingOf(pod)?.reason === 'CreateContainerError' ? 'runtime' : 'kubelet';
    return {
      ...status,
      phase: 'failed',
      reason: `${status.reason} (for ${lasted} s: the ${who} did not clear it)`,
    };
  }
}
