import type { DesiredJob, ReplicaStatus } from './ports.ts';
import { type LiveReplica, replicaKey } from './stopping-replicas.ts';

/**
 * The GPUs boa gave each replica it sent the executor, kept while the replica is wanted or reported, so
 * that one it is stopping is shown holding them (stopping-replicas.ts): the executor's status does not
 * say.
 */
export class SentGpus {
  private readonly byReplica = new Map<string, number>();

  sent(job: DesiredJob): void {
    for (const spec of job.replicas) this.byReplica.set(replicaKey(spec), spec.gpus);
  }

  /**
   * The replicas the executor reports not ended, each with the GPUs it was given when known; forgets the
   * GPUs of replicas neither reported nor wanted any more.
   */
  live(statuses: readonly ReplicaStatus[], wanted: Iterable<DesiredJob>): LiveReplica[] {
    const live = statuses
      .filter((r) => r.phase !== 'succeeded' && r.phase !== 'failed')
      .map((r) => {
        const gpus = this.byReplica.get(replicaKey(r));
        return gpus === undefined ? r : { ...r, gpus };
      });
    const kept = new Set(statuses.map(replicaKey));
    for (const job of wanted) for (const spec of job.replicas) kept.add(replicaKey(spec));
    for (const key of this.byReplica.keys()) if (!kept.has(key)) this.byReplica.delete(key);
    return live;
  }
}
