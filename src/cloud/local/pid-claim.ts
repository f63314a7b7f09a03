/**
 * The replica's pid record as a claim: at most one supervisor runs a replica, the one its record names.
 * A supervisor links its record in and ends at once if the record names another (replica-supervisor.sh);
 * boa writes the record of a supervisor it launched the same way, so neither replaces the other's. Two
 * supervisors can race for one replica when a start's answer was lost (the launcher ended with it
 * pending) and its supervisor, held up past the wait for its record, starts after the replica was
 * launched again: both ran it.
 */
import { linkSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { type PidRecord, readPid, recordFile } from './executor-records.ts';

/**
 * Writes `record` as the replica's pid record unless one is there; returns the record there if it names
 * another process (that supervisor claimed the replica first), else undefined. A write that fails (a
 * full disk) returns undefined: the caller's own write reports it and tries again.
 */
export function claimPidRecord(dir: string, rank: number, record: PidRecord): PidRecord | undefined {
  const file = recordFile(dir, rank, 'pid');
  const claim = `${file}.claim.tmp`;
  try {
    writeFileSync(claim, JSON.stringify(record));
    linkSync(claim, file);
    return undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return undefined;
    const there = readPid(dir, rank);
    return there && there.pid !== record.pid ? there : undefined;
  } finally {
    rmSync(claim, { force: true });
  }
}

/**
 * Takes an earlier start's pid record away before a launch, and returns what it held: renamed, not
 * removed, so a record a late supervisor links in meanwhile is either taken (and returned) or stays (and
 * the launch's own supervisor defers to it). The caller puts back one that names a live supervisor.
 */
export function takePidRecord(dir: string, rank: number): PidRecord | undefined {
  const file = recordFile(dir, rank, 'pid');
  const taken = `${file}.taken.tmp`;
  try {
    renameSync(file, taken);
  } catch {
    return undefined; // none
  }
  try {
    return JSON.parse(readFileSync(taken, 'utf8')) as PidRecord;
  } catch {
    return undefined;
  } finally {
    rmSync(taken, { force: true });
  }
}
