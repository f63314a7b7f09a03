import type { Logger } from 'pino';
import { writeStop } from './executor-records.ts';
import type { LocalReplica } from './local-replica.ts';
import { killReplicaGroups, signalQuietly } from './replica-signals.ts';

/**
 * boa's stop of a local replica, one step a pass: SIGTERM once (the supervisor passes it to the
 * command's group), recorded before and after it is sent, then SIGKILL to both groups once the grace
 * has passed on the steady clock (`steadyNow`; a wall clock stepped forward must not cut it short).
 */
export function stopReplica(
  replica: LocalReplica,
  clocks: { now: number; steadyNow: number },
  graceMs: number,
  logger: Logger,
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
    signalQuietly(replica.pid, 'SIGTERM');
    // So a restarted boa does not send it again: a second SIGTERM cuts a handler's save short.
    try {
      writeStop(replica.dir, replica.rank, now, { sent: true });
    } catch {
      // Not recorded: a restart sends it once more, as before there was this record.
    }
    const { jobId, generation, rank } = replica;
    logger.info({ event: 'replica_stopping', jobId, generation, rank }, 'SIGTERM');
    return;
  }
  // Adopted stops get theirs from their record (executor-adopt.ts); one without is counted from now.
  replica.stopSteadyAt ??= steadyNow;
  if (!replica.killed && steadyNow - replica.stopSteadyAt >= graceMs) {
    replica.killed = true;
    killReplicaGroups(replica);
    const { jobId, generation, rank } = replica;
    logger.warn({ event: 'replica_killed', jobId, generation, rank }, 'grace period over: SIGKILL');
  }
}
