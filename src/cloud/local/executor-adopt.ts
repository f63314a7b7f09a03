import type { Logger } from 'pino';
import {
  isOurSupervisor,
  processExists,
  readExit,
  readStop,
  scanRecords,
  type UnrecordedSupervisor,
  unrecordedSupervisors,
} from './executor-records.ts';
import type { LocalReplica } from './local-replica.ts';
import type { RendezvousPorts } from './rendezvous-ports.ts';
import { signalQuietly } from './replica-signals.ts';

/** A replica found running without its record, being stopped: SIGKILLed at `killAt` if still there. */
export interface StrayReplica {
  readonly stray: UnrecordedSupervisor;
  readonly killAt: number;
}

/**
 * What a starting executor finds under DATA_DIR/jobs: the replicas its records list (alive ones adopted,
 * guarding against pid reuse), and replicas running without a record, which it starts stopping.
 */
export function adoptRecorded(
  jobsDir: string,
  now: number,
  graceMs: number,
  logger: Logger,
  ports: RendezvousPorts,
): { replicas: LocalReplica[]; strays: StrayReplica[] } {
  // Running without its record, nothing can adopt it, and its replica would be started again beside
  // it: it is stopped as any replica is (SIGTERM, time to checkpoint, SIGKILL after the grace), and
  // its job starts nothing until it is gone, then resumes from its checkpoint.
  const strays: StrayReplica[] = [];
  for (const stray of unrecordedSupervisors(jobsDir)) {
    logger.warn(
      { event: 'replica_unrecorded', pid: stray.pid, dir: stray.dir },
      'a replica runs without its record (its folder was removed); stopping it so it does not run twice',
    );
    signalQuietly(stray.pid, 'SIGTERM');
    strays.push({ stray, killAt: now + graceMs });
  }
  const replicas: LocalReplica[] = [];
  for (const found of scanRecords(jobsDir)) {
    const exit = readExit(found.dir, found.rank);
    const ours = isOurSupervisor(found.record.pid, found.dir, found.rank);
    const alive = exit === undefined && ours;
    const stopAt = readStop(found.dir, found.rank);
    ports.adopt(found.jobId, found.generation, found.dir);
    replicas.push({
      jobId: found.jobId,
      generation: found.generation,
      rank: found.rank,
      node: found.record.node,
      dir: found.dir,
      pid: found.record.pid,
      startedAt: found.record.startedAt,
      alive,
      exit,
      goneAt: alive || exit ? undefined : now,
      stopAt,
      killed: false,
      owned: ours || !processExists(found.record.pid),
    });
    if (alive) logger.info({ event: 'replica_adopted', ...found.record, dir: found.dir }, 'adopted');
    // A stop is recorded before its SIGTERM is sent: a service killed in between never sent it, and the
    // replica would get only the SIGKILL at the grace's end, with no chance to checkpoint. Sent again
    // (the supervisor forwards each, the command's client takes a second as the first).
    if (alive && stopAt !== undefined && now - stopAt < graceMs) signalQuietly(found.record.pid, 'SIGTERM');
  }
  return { replicas, strays };
}
