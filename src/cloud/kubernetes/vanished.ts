import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { DesiredJob, ReplicaStatus } from '../../service/ports.ts';
import { identityOf, type PodIdentity } from './names.ts';
import { replicaStatusOf } from './pods.ts';

/**
 * Wanted pods seen before and now gone, which boa did not delete: deleted by someone else (kubectl,
 * a controller, a node's removal). Their jobs resume as a new generation, every rank together, rather
 * than the one pod coming back alone to a rendezvous its peers have left. One that had ended before it
 * went (a rank that finished, its node then removed and its pod collected) is reported as it ended:
 * read as interrupted, it resumed a job whose rank 0 was about to finish (found in review). After a
 * restart of the service nothing is remembered as seen, and a missing pod is simply created.
 */
export class VanishedPods {
  /** Pods of wanted replicas as last seen, by name. */
  private readonly seen = new Map<
    string,
    { id: PodIdentity; node: string; startedAt?: number; ended?: ReplicaStatus }
  >();
  /** Replicas whose pod someone else deleted: reported interrupted until their generation ends. */
  private readonly vanished = new Map<string, ReplicaStatus>();

  constructor(
    private readonly logger: Logger,
    private readonly now: () => number,
  ) {}

  /** Compares the wanted pods listed now with those seen before. */
  note(wanted: readonly V1Pod[], want: ReadonlyMap<number, DesiredJob>): void {
    const present = new Set<string>();
    for (const pod of wanted) {
      const name = pod.metadata?.name;
      const id = identityOf(pod.metadata?.labels);
      if (!name || !id) continue;
      present.add(name);
      // Terminating: if boa deleted it, it is not to be missed; if someone else did, it was seen before.
      if (pod.metadata?.deletionTimestamp) continue;
      const startedAt = pod.status?.containerStatuses?.[0]?.state?.running?.startedAt;
      const status = replicaStatusOf(pod);
      const ended = status?.phase === 'succeeded' || status?.phase === 'failed' ? status : undefined;
      const before = this.seen.get(name);
      this.seen.set(name, {
        id,
        node: pod.spec?.nodeName ?? '',
        ...(startedAt
          ? { startedAt: new Date(startedAt).getTime() }
          : before?.startedAt
            ? { startedAt: before.startedAt }
            : {}),
        ...(ended ? { ended } : {}),
      });
    }
    const now = this.now();
    for (const [name, { id, node, startedAt, ended }] of this.seen) {
      if (want.get(id.jobId)?.generation !== id.generation) this.seen.delete(name);
      else if (!present.has(name) && ended) {
        this.seen.delete(name);
        this.vanished.set(name, ended);
        this.logger.info(
          { event: 'kube.pod.gone-after-end', pod: name, phase: ended.phase },
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
}
