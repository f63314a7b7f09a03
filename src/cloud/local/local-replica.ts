import type { ReplicaStatus } from '../../service/ports.ts';
import { notRestartable } from '../command-exits.ts';
import { type ExitRecord, exitCodeOf, readExit } from './executor-records.ts';
import { isOurSupervisor } from './replica-processes.ts';
import type { Launched } from './launcher.ts';

/** A replica as the local executor tracks it. */
export interface LocalReplica {
  readonly jobId: number;
  readonly generation: number;
  readonly rank: number;
  readonly node: string;
  readonly dir: string;
  readonly pid: number;
  /** When it was started (ms): with its exit record's time, how long it ran. */
  readonly startedAt: number;
  /** The address it reports to (adopted-url.ts), when known: its BOA_URL, or what its BOA_URL_FILE says. */
  boaUrl?: string;
  /** Started by this instance: the launcher reports its exit. Adopted ones are checked by pid. */
  launched?: Launched;
  alive: boolean;
  exit?: ExitRecord;
  /** When it was found gone without an exit record (its supervisor killed from outside). */
  goneAt?: number;
  /** When SIGTERM was sent (also on disk, so a restarted service keeps the grace deadline). */
  stopAt?: number;
  /** The same on the steady clock (LocalExecutorOptions.monotonicNow), which the grace is counted on. */
  stopSteadyAt?: number;
  killed: boolean;
  /**
   * Its supervisor lost: the groups whose leader got boa's SIGTERM, whose orphans get it once the leader
   * has ended (also in its stop record, so a restart sends it neither twice nor never).
   */
  termLeaders?: readonly number[];
  /**
   * boa sent its command's main process the stop's SIGTERM, its supervisor lost before it did
   * (replica-stop.ts): remembered here too, so a `.termed` record that cannot be written (its folder
   * removed) does not have it sent again every pass.
   */
  mainTermSent?: true;
  /** Its supervisor lost, its command still running: being stopped (replica-stop.ts stopLostReplica). */
  lostRunning?: boolean;
  /**
   * Its supervisor's process group is ours to kill: we spawned it, or its recorded pid is our supervisor
   * or no process at all (its command may linger in the group). A recycled pid's group never is; its
   * command's group is still ended where /proc tells it apart (replica-signals.ts).
   */
  readonly owned: boolean;
  /** Its pid record could not be written (a full disk): written again at each pass until it is. */
  unrecorded?: true;
  /** Ended on its own and reported once, its generation no longer wanted: forgotten at the next pass. */
  reportedEnded?: true;
}

/** Whether the replica still runs: its launcher's word, or for an adopted one its records and pid. */
export function refreshLiveness(replica: LocalReplica, now: number): void {
  if (!replica.alive) return;
  const launched = replica.launched;
  // Adopted, or its launcher gone: a pid is only a number, and a recycled one looks alive, so the exit
  // record counts first and then the pid must still be this replica's supervisor (else boa would keep
  // the job running and signal a stranger at its stop).
  const gone =
    launched && !launched.orphaned
      ? launched.exited
      : readExit(replica.dir, replica.rank) !== undefined ||
        !isOurSupervisor(replica.pid, replica.dir, replica.rank);
  if (gone) {
    replica.alive = false;
    replica.exit = readExit(replica.dir, replica.rank);
    if (!replica.exit) replica.goneAt = now;
  }
}

/** Where a local job's command and PATH are to be checked when it exits 127 or 126. */
const ON_THIS_MACHINE = "on this machine (the job's PATH: its --env PATH, else the service's)";

/**
 * What the replica reads as to the service. `now`: for one found gone without an exit record; `graceMs`:
 * its stop's grace, after which SIGKILL comes.
 */
export function replicaStatus(replica: LocalReplica, now: number, graceMs: number): ReplicaStatus {
  const base = {
    jobId: replica.jobId,
    generation: replica.generation,
    rank: replica.rank,
    node: replica.node,
  };
  if (replica.exit) {
    const exitCode = exitCodeOf(replica.exit);
    const reason =
      replica.exit.reason ?? (replica.exit.signal ? `killed by ${replica.exit.signal}` : undefined);
    // The exit record's time has whole seconds.
    const ranForMs = Math.max(0, replica.exit.at - replica.startedAt);
    // Ended by a SIGTERM: a stop, even with exit 0, never the job's own end. One this executor did not
    // send (it records its own first) is said to be someone else's.
    if (replica.exit.stopped) {
      const by = replica.stopAt === undefined ? 'a SIGTERM boa did not send' : "boa's stop";
      return {
        ...base,
        phase: 'failed',
        exitCode,
        reason: `${reason ?? 'ended'} after ${by}`,
        interrupted: true,
        ranForMs,
      };
    }
    const notRestartableWhy =
      replica.exit.command === true ? notRestartable(exitCode, ON_THIS_MACHINE) : undefined;
    return {
      ...base,
      phase: exitCode === 0 ? 'succeeded' : 'failed',
      exitCode,
      reason,
      ...(notRestartableWhy === undefined ? {} : { notRestartable: notRestartableWhy }),
      ranForMs,
      endedAt: replica.exit.at,
    };
  }
  if (!replica.alive && !replica.lostRunning) {
    return {
      ...base,
      phase: 'failed',
      reason: 'gone without an exit record (killed from outside, supervisor and all)',
      interrupted: true,
      ranForMs: Math.max(0, (replica.goneAt ?? now) - replica.startedAt),
    };
  }
  if (replica.stopAt === undefined) return { ...base, phase: 'running' };
  return { ...base, phase: 'stopping', killAt: replica.stopAt + graceMs };
}
