import type { V1Pod } from '@kubernetes/client-node';
import type { ReplicaStatus } from '../../service/ports.ts';
import { waitingOf } from './create-errors.ts';
import { forgetUnlisted } from './pod-uids.ts';
import { pullRefused, said } from './pods.ts';

/**
 * The last ErrImagePull each pod showed, for while it waits in ImagePullBackOff. The kubelet says why a
 * pull failed only in ErrImagePull, for the seconds until its next sync of the pod, and then "Back-off
 * pulling image ..." for up to 5 minutes, naming no cause; a pass reads the pod as it is then, so a
 * wrong tag was mostly seen backing off, and its job held its GPUs until the start deadline (900 s),
 * failing with no cause, each restart again (found in review). The cache tells this of every pod
 * version it takes, so no ErrImagePull is missed; in memory only: after a restart of boa, the kubelet's
 * next pull (within its 5-minute back-off) shows the cause again.
 */
export class PullErrors {
  /** Pod uid: the message of its last ErrImagePull. */
  private readonly last = new Map<string, string>();

  /** A pod version the cache took (cache.ts: seen). */
  seen(pod: V1Pod): void {
    const uid = pod.metadata?.uid;
    const waiting = waitingOf(pod);
    if (uid && waiting?.reason === 'ErrImagePull' && waiting.message) this.last.set(uid, waiting.message);
  }

  /** Called once a pass with every pod listed: a pod gone is forgotten. */
  note(pods: readonly V1Pod[]): void {
    forgetUnlisted(this.last, pods);
  }

  /**
   * A pod backing off a pull: failed if its last pull error was a registry refusing the image (as
   * ErrImagePull itself is, pods.ts), else starting with that error said, for the start deadline to name.
   */
  status(pod: V1Pod, status: ReplicaStatus): ReplicaStatus {
    const cause = this.last.get(pod.metadata?.uid ?? '');
    if (status.phase !== 'starting' || cause === undefined || waitingOf(pod)?.reason !== 'ImagePullBackOff')
      return status;
    const reason = `${said('ImagePullBackOff', waitingOf(pod)?.message)} (last pull: ${said('ErrImagePull', cause)})`;
    return { ...status, phase: pullRefused(cause) ? 'failed' : 'starting', reason };
  }
}
