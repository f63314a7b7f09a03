import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { DesiredJob, ReplicaStatus } from '../../service/ports.ts';
import { identityOf, type PodIdentity } from './names.ts';

/** A wanted pod as last seen: by a pass, or by the cache's watch between passes. */
interface SeenPod {
  readonly id: PodIdentity;
  readonly uid: string | undefined;
  readonly node: string;
  readonly startedAt?: number;
  /** How it had ended, as the executor reports it (a container its node lost is interrupted). */
  readonly ended?: ReplicaStatus;
}

/**
 * Wanted pods seen before and now gone, which boa did not delete: deleted by someone else (kubectl,
 * a controller, a node's removal). Their jobs resume as a new generation, every rank together, rather
 * than the one pod coming back alone to a rendezvous its peers have left. One that had ended before it
 * went is reported as it ended, as last seen by the watch, between passes too: a rank that finished,
 * its node then removed and its pod collected, read as interrupted resumed a job whose rank 0 was about
 * to finish (found in review); a pod the pod garbage collector or an eviction marked before deleting it
 * says so, with its run; a container its node lost stays an interruption, not the job's failure (found
 * in review: reported as the kubelet wrote it, exit 137, once its pod was collected). After a restart of
 * the service nothing is remembered as seen, and a missing pod is simply created.
 */
export class VanishedPods {
  /** Pods of wanted replicas as last seen, by name. */
  private readonly seen = new Map<string, SeenPod>();
  /** Replicas whose pod someone else deleted: reported interrupted until their generation ends. */
  private readonly vanished = new Map<string, ReplicaStatus>();

  constructor(
    private readonly logger: Logger,
    private readonly now: () => number,
    /** The pod's status as the executor reports it. */
    private readonly statusOf: (pod: V1Pod) => ReplicaStatus | undefined,
  ) {}

  /** Every version of a pod the cache takes: one already seen by a pass is remembered as it is now. */
  versionSeen(pod: V1Pod): void {
    const name = pod.metadata?.name ?? '';
    const before = this.seen.get(name);
    if (before && before.uid === pod.metadata?.uid) this.remember(name, pod, before.id, before);
  }

  /** Compares the wanted pods listed now with those seen before. */
  note(wanted: readonly V1Pod[], want: ReadonlyMap<number, DesiredJob>): void {
    for (const pod of wanted) {
      const name = pod.metadata?.name;
      const id = identityOf(pod.metadata?.labels);
      if (!name || !id) continue;
      const before = this.seen.get(name);
      const same = before?.uid === pod.metadata?.uid ? before : undefined;
      // Terminating and not seen before: boa deleted it, and its absence is not to be missed.
      if (pod.metadata?.deletionTimestamp && !same) continue;
      this.remember(name, pod, id, same);
    }
    this.missed(wanted, want);
  }

  /**
   * At the end of a pass, against the pods listed then: one that went during the pass is reported by
   * it, not left unreported until the next (found in review: its rank had no status for a pass).
   */
  settle(listed: readonly V1Pod[], want: ReadonlyMap<number, DesiredJob>): void {
    this.missed(listed, want);
  }

  /** boa deletes this pod (or found it gone): its absence is not to be missed. */
  deletedByBoa(name: string): void {
    this.seen.delete(name);
  }

  has(name: string): boolean {
    return this.vanished.has(name);
  }

  statuses(): IterableIterator<ReplicaStatus> {
    return this.vanished.values();
  }

  private remember(name: string, pod: V1Pod, id: PodIdentity, before: SeenPod | undefined): void {
    const running = pod.status?.containerStatuses?.[0]?.state?.running?.startedAt;
    const startedAt = running ? new Date(running).getTime() : before?.startedAt;
    const status = this.statusOf(pod);
    const ended = status?.phase === 'succeeded' || status?.phase === 'failed' ? status : undefined;
    this.seen.set(name, {
      id,
      uid: pod.metadata?.uid,
      node: pod.spec?.nodeName ?? '',
      ...(startedAt === undefined ? {} : { startedAt }),
      ...(ended ? { ended } : {}),
    });
  }

  private missed(listed: readonly V1Pod[], want: ReadonlyMap<number, DesiredJob>): void {
    const present = new Set(listed.map((pod) => pod.metadata?.name));
    const now = this.now();
    for (const [name, { id, node, startedAt, ended }] of this.seen) {
      if (want.get(id.jobId)?.generation !== id.generation) this.seen.delete(name);
      else if (!present.has(name) && ended) {
        this.seen.delete(name);
        this.vanished.set(name, ended);
        this.logger.info(
          { event: 'kube.pod.gone-after-end', pod: name, phase: ended.phase, reason: ended.reason },
          'ended pod gone',
        );
      } else if (!present.has(name)) {
        this.seen.delete(name);
        this.vanished.set(name, {
          ...id,
          node,
          phase: 'failed',
          reason: 'pod deleted by someone else',
          interrupted: true,
          ranForMs: startedAt === undefined ? 0 : Math.max(0, now - startedAt),
        });
        this.logger.warn({ event: 'kube.pod.vanished', pod: name }, 'replica pod deleted by someone else');
      }
    }
    for (const [name, status] of this.vanished) {
      if (want.get(status.jobId)?.generation !== status.generation) this.vanished.delete(name);
    }
  }
}
