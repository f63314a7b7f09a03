import type { Logger } from 'pino';
import { reportedUrl, tellMovedUrl } from './adopted-url.ts';
import { orphansOwed, readExit, readStop, scanRecords, writeStop } from './executor-records.ts';
import {
  isOurSupervisor,
  processExists,
  type UnrecordedSupervisor,
  unrecordedSupervisors,
} from './replica-processes.ts';
import type { LocalReplica } from './local-replica.ts';
import { procSnapshot } from './proc-snapshot.ts';
import type { RendezvousPorts } from './rendezvous-ports.ts';
import { signalQuietly } from './replica-signals.ts';
import { termLostMain } from './replica-stop.ts';

/** A replica found running without its record, being stopped: SIGKILLed at `killAt` if still there. */
export interface StrayReplica {
  readonly stray: UnrecordedSupervisor;
  readonly killAt: number;
}

/**
 * What a starting executor finds under DATA_DIR/jobs: the replicas its records list (alive ones adopted,
 * guarding against pid reuse), and replicas running without a record, which it starts stopping.
 * `serviceUrl`: BOA_URL as replicas get it now; adopted ones reporting to another are told it in their
 * BOA_URL_FILE (adopted-url.ts), and named in a warning.
 */
export function adoptRecorded(
  jobsDir: string,
  clocks: { now: number; steadyNow: number },
  graceMs: number,
  logger: Logger,
  ports: RendezvousPorts,
  serviceUrl?: string,
): { replicas: LocalReplica[]; strays: StrayReplica[] } {
  // Running without its record, nothing can adopt it, and its replica would be started again beside
  // it: it is stopped as any replica is (SIGTERM, time to checkpoint, SIGKILL after the grace), and
  // its job starts nothing until it is gone, then resumes from its checkpoint.
  const { now, steadyNow } = clocks;
  const strays: StrayReplica[] = [];
  for (const stray of unrecordedSupervisors(jobsDir)) {
    logger.warn(
      { event: 'replica_unrecorded', pid: stray.pid, dir: stray.dir },
      'a replica runs without its record (its folder was removed); stopping it so it does not run twice',
    );
    signalQuietly(stray.pid, 'SIGTERM');
    strays.push({ stray, killAt: steadyNow + graceMs });
  }
  const replicas: LocalReplica[] = [];
  const procs = procSnapshot();
  for (const found of scanRecords(jobsDir)) {
    const exit = readExit(found.dir, found.rank);
    const ours = isOurSupervisor(found.record.pid, found.dir, found.rank);
    const alive = exit === undefined && ours;
    const stop = readStop(found.dir, found.rank);
    const stopAt = stop?.at;
    // The grace already used, by the wall clock (all a restart has), within [0, grace]: a clock stepped
    // while boa was down neither kills at once nor holds the SIGKILL off beyond one grace period.
    const used = stopAt === undefined ? 0 : Math.min(graceMs, Math.max(0, now - stopAt));
    ports.adopt(found.jobId, found.generation, found.dir);
    const replica: LocalReplica = {
      jobId: found.jobId,
      generation: found.generation,
      rank: found.rank,
      node: found.record.node,
      dir: found.dir,
      pid: found.record.pid,
      startedAt: found.record.startedAt,
      boaUrl: reportedUrl(found.dir, found.rank, found.record, ours ? found.record.pid : undefined),
      alive,
      exit,
      goneAt: alive || exit ? undefined : now,
      stopAt,
      ...(stopAt === undefined ? {} : { stopSteadyAt: steadyNow - used }),
      killed: false,
      // A restart mid-grace: orphans still owed their SIGTERM get it, once (replica-stop.ts).
      ...(stop?.leaders?.length ? { termLeaders: stop.leaders } : {}),
      owned: ours || !processExists(found.record.pid),
    };
    replicas.push(replica);
    // Named by job, generation and rank, not only its node and folder: the operator reading the log
    // after a restart asks which job runs on. The executor keeps no job names; the service log has them.
    if (alive) {
      const { jobId, generation, rank } = found;
      logger.info(
        { event: 'replica_adopted', jobId, generation, rank, ...found.record, dir: found.dir },
        `adopted job ${jobId}'s running replica (generation ${generation}, rank ${rank})`,
      );
    }
    // A stop is recorded before its SIGTERM is sent, and again once sent: a service killed in between
    // never sent it, and the replica would get only the SIGKILL at the grace's end, with no chance to
    // checkpoint, so it is sent now. One already sent is not sent twice (a second SIGTERM cuts a
    // handler's save short; torchrun's agent ends at once on it).
    // A lost supervisor's command (no exit record) gets it itself, as stopReplica sends it.
    if (stop !== undefined && !stop.sent && used < graceMs && (alive || exit === undefined)) {
      // A supervisor that got it already passes on none again (replica-supervisor.sh forward_term).
      if (alive) {
        signalQuietly(found.record.pid, 'SIGTERM');
        replica.termLeaders = orphansOwed(found.dir, found.rank);
      } else replica.termLeaders = termLostMain(replica, procs);
      // Sent now: recorded so, or each restart during the grace would send it again (found in review).
      try {
        writeStop(found.dir, found.rank, stop.at, { sent: true, leaders: replica.termLeaders });
      } catch {
        // Not recorded: the next restart sends it once more.
      }
    }
  }
  tellMovedUrl(replicas, serviceUrl, logger);
  return { replicas, strays };
}
