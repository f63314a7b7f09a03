import type { Logger } from 'pino';
import { mainTermed, orphansOwed, orphansTermed, writeStop } from './executor-records.ts';
import type { LocalReplica } from './local-replica.ts';
import type { ProcSnapshot } from './proc-snapshot.ts';
import {
  killReplicaGroups,
  replicaTargets,
  signalQuietly,
  termLostReplica,
  termOrphans,
} from './replica-signals.ts';

/**
 * A stop's SIGTERM for a replica whose supervisor is lost: to its command's main process unless that has
 * it already (its supervisor said so in `.termed` before it passed one on: a SIGTERM from outside, or
 * boa's own, boa killed before it recorded it sent), a second cutting the command's save short. Returns
 * the groups owed theirs once their leader ends (termLeaders).
 */
export function termLostMain(replica: LocalReplica, procs: ProcSnapshot): number[] {
  replica.mainTermSent = true;
  if (mainTermed(replica.dir, replica.rank)) return orphansOwed(replica.dir, replica.rank);
  return termLostReplica(replica, procs);
}

/**
 * boa's stop of a local replica, one step a pass: SIGTERM once (the supervisor passes it to the
 * command's main process), recorded before and after it is sent, then SIGKILL to both groups once the
 * grace has passed on the steady clock (`steadyNow`; a wall clock stepped forward must not cut it short).
 * A replica whose supervisor is lost (not `alive`, its command still running) is stopped the same way,
 * its SIGTERM sent to what is left of it (replicaTargets): a training job gets its time to checkpoint.
 */
export function stopReplica(
  replica: LocalReplica,
  clocks: { now: number; steadyNow: number },
  graceMs: number,
  logger: Logger,
  procs: ProcSnapshot,
): void {
  const { now, steadyNow } = clocks;
  if (replica.stopAt === undefined) {
    replica.stopAt = now;
    replica.stopSteadyAt = steadyNow;
    try {
      writeStop(replica.dir, replica.rank, now);
    } catch (error) {
      // Its folder removed from outside: the stop is still sent; only a restart would forget the deadline.
      logger.warn(
        { event: 'replica_record_failed', dir: replica.dir, error: (error as Error).message },
        'stop not recorded',
      );
    }
    if (replica.alive) {
      signalQuietly(replica.pid, 'SIGTERM');
      // Owed by the supervisor once the main process ends; boa's if the supervisor is lost first.
      replica.termLeaders = orphansOwed(replica.dir, replica.rank);
    } else replica.termLeaders = termLostMain(replica, procs);
    // So a restarted boa does not send it again: a second SIGTERM cuts a handler's save short.
    try {
      writeStop(replica.dir, replica.rank, now, { sent: true, leaders: replica.termLeaders });
    } catch {
      // Not recorded: a restart sends it once more, as before there was this record.
    }
    const { jobId, generation, rank } = replica;
    const lost = !replica.alive || undefined;
    logger.info({ event: 'replica_stopping', jobId, generation, rank, lost }, 'SIGTERM');
    return;
  }
  // Adopted stops get theirs from their record (executor-adopt.ts); one without is counted from now.
  replica.stopSteadyAt ??= steadyNow;
  if (!replica.killed && steadyNow - replica.stopSteadyAt >= graceMs) {
    replica.killed = true;
    killReplicaGroups(replica, procs);
    const { jobId, generation, rank } = replica;
    logger.warn({ event: 'replica_killed', jobId, generation, rank }, 'grace period over: SIGKILL');
  } else if (
    !replica.killed &&
    !replica.alive &&
    !replica.mainTermSent &&
    !mainTermed(replica.dir, replica.rank)
  ) {
    // Its supervisor lost before it passed the SIGTERM on (it came in the instant between the command's
    // start and the trap that passes it on, or the supervisor was killed holding it): the command gets
    // it from boa, or it would run the whole grace and be SIGKILLed with no chance to checkpoint.
    replica.mainTermSent = true;
    replica.termLeaders = termLostReplica(replica, procs);
    try {
      writeStop(replica.dir, replica.rank, replica.stopAt, { sent: true, leaders: replica.termLeaders });
    } catch {
      // Not recorded: a restart sends the orphans theirs once more.
    }
    const { jobId, generation, rank } = replica;
    logger.info({ event: 'replica_stopping', jobId, generation, rank, lost: true }, 'SIGTERM');
  } else if (!replica.killed && !replica.alive && replica.termLeaders?.length) {
    // A lost supervisor's command behind a shell that did not exec it: the shell died of the SIGTERM and
    // its orphaned trainer gets it now, as the supervisor's term_orphans sends it (found in review: it
    // got none and was SIGKILLed at the grace's end, its checkpoint lost). Also when the supervisor was
    // alive at the stop and was lost before the shell ended, unless it had sent them theirs.
    const waiting = orphansTermed(replica.dir, replica.rank)
      ? []
      : termOrphans(replica, replica.termLeaders, procs);
    if (waiting.length === replica.termLeaders.length) return;
    replica.termLeaders = waiting;
    try {
      writeStop(replica.dir, replica.rank, replica.stopAt, { sent: true, leaders: waiting });
    } catch {
      // Not recorded: a restart sends the orphans theirs once more.
    }
  }
}

/**
 * A replica gone without an exit record (its supervisor killed alone, maybe while boa was down, its pid
 * maybe reused since), which boa stops or no longer wants: whether its command still runs, and if so one
 * step of its stop (stopReplica). The command runs on in a session of its own, and SIGKILLing it at once
 * cost a training job its checkpoint.
 */
export function stopLostReplica(
  replica: LocalReplica,
  clocks: { now: number; steadyNow: number },
  graceMs: number,
  logger: Logger,
  procs: ProcSnapshot,
): boolean {
  const left = replica.exit === undefined ? replicaTargets(replica, procs) : [];
  replica.lostRunning = left.length > 0;
  if (!replica.lostRunning) return false;
  // Killed, yet something is left (forked just before the SIGKILL): killed too.
  if (replica.killed) for (const target of left) signalQuietly(target, 'SIGKILL');
  else stopReplica(replica, clocks, graceMs, logger, procs);
  return true;
}
