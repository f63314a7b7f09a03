import type { Logger } from 'pino';
import { existsSync, writeFileSync } from 'node:fs';
import { generationDir, readPid, recordFile, removeRecords, type ReplicaKey } from './executor-records.ts';
import type { ProcSnapshot } from './proc-snapshot.ts';
import { isOurSupervisor } from './replica-processes.ts';
import { replicaTargets, signalQuietly } from './replica-signals.ts';
import type { SpawnFailures } from './spawn-failures.ts';

/** A lost start's supervisor that nothing adopts, being stopped: SIGKILLed at `killAt` if still there. */
export interface LostStray {
  readonly replica: ReplicaKey & { readonly dir: string; readonly pid: number; readonly owned: true };
  readonly killAt: number;
}

/**
 * The supervisors of lost starts no launch will adopt (SpawnFailures.unadopted) whose record has appeared:
 * each sent its SIGTERM, as a stray found at a restart is (executor-adopt.ts). Stopped, not adopted: a
 * replica given up on is reported failed, never started again, and the service acts on that failure (a
 * restart counted, its next generation started on the same GPUs, or the job failed); adopted, it would run
 * a generation the service has failed, beside its next one. One no longer desired has nothing to run for.
 */
export function findLostStrays(
  spawnFailures: SpawnFailures,
  jobsDir: string,
  tracked: (key: ReplicaKey) => boolean,
  killAt: number,
  logger: Logger,
): LostStray[] {
  const found: LostStray[] = [];
  for (const spec of spawnFailures.unadopted()) {
    if (tracked(spec)) continue;
    const { jobId, generation, rank } = spec;
    const dir = generationDir(jobsDir, jobId, generation);
    // Before the record is read: a supervisor that links its record after this sees the marker and ends.
    markAbandoned(dir, rank);
    const record = readPid(dir, rank);
    if (record === undefined) continue; // none yet: looked for again at the next pass
    spawnFailures.settled(spec);
    // One already ended is not signalled (its pid may be reused); its records still go (lostStraysLeft).
    if (isOurSupervisor(record.pid, dir, rank)) {
      logger.warn(
        { event: 'replica_lost_start_stopped', jobId, generation, rank, pid: record.pid },
        'a replica whose start was reported lost runs although it is failed or no longer wanted: stopping it',
      );
      signalQuietly(record.pid, 'SIGTERM');
    }
    found.push({ replica: { jobId, generation, rank, dir, pid: record.pid, owned: true }, killAt });
  }
  return found;
}

/**
 * `<rank>.abandoned`: a lost start's supervisor that has not started yet (held up on a loaded machine, past
 * the seconds this executor looks for its record) ends at once when it does, running nothing
 * (replica-supervisor.sh). Kept with the generation's folder; a launch into the folder removes it.
 */
function markAbandoned(dir: string, rank: number): void {
  const file = recordFile(dir, rank, 'abandoned');
  try {
    if (!existsSync(file)) writeFileSync(file, '');
  } catch {
    // Its folder gone: no supervisor can start in it.
  }
}

/**
 * Of `strays`, those with something still running (their job's starts held back in `blocked`, as for any
 * stray, so its next generation never runs beside it), SIGKILLed once past `killAt`. The records of those
 * gone are removed: left, a restart would adopt them as a replica of their generation.
 */
export function lostStraysLeft(
  strays: readonly LostStray[],
  steadyNow: number,
  procs: ProcSnapshot,
  blocked: Set<number>,
): LostStray[] {
  return strays.filter(({ replica, killAt }) => {
    const targets = replicaTargets(replica, procs, 'SIGKILL');
    if (targets.length === 0) {
      try {
        removeRecords(replica.dir, replica.rank);
      } catch {
        // Its folder made unwritable from outside: a restart adopts the records as an ended replica.
      }
      return false;
    }
    if (steadyNow >= killAt) for (const target of targets) signalQuietly(target, 'SIGKILL');
    blocked.add(replica.jobId);
    return true;
  });
}
