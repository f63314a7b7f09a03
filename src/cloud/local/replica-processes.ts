/**
 * Which live processes are a replica's: the pid, process-group and environment checks that keep boa from
 * adopting or signalling a process that only reuses a recorded pid or group (Linux /proc; kill(0) and ps
 * elsewhere).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { readPid, recordFile, type ReplicaKey } from './executor-records.ts';
import type { ProcEntry, ProcSnapshot } from './proc-snapshot.ts';

/** A live process (a zombie left to an init that never reaps, as in some containers, is not). */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    // ESRCH: gone. EPERM: another user's process, so not our replica either.
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true; // no /proc (macOS): kill(0) is all there is
  }
}

/**
 * Whether process group `group` is still this replica's command: a group id from a record can be any
 * process's after the command's group emptied (a reboot, a long outage), so boa signals it only when a
 * member's environment says it is this replica's (the supervisor's BOA_SIGTERM_FILE, or the job, generation
 * and rank boa gave it). Without /proc (macOS) there is no way to tell, and the group is taken as ours.
 */
export function groupIsReplicas(
  group: number,
  replica: ReplicaKey & { readonly dir: string },
  procs: ProcSnapshot,
): boolean {
  try {
    process.kill(-group, 0); // a group with no process left (the usual case) needs no look
  } catch {
    return false;
  }
  if (procs() === undefined) return true;
  return replicaProcesses(replica, procs, group).length > 0;
}

/**
 * Live processes (Linux /proc; none elsewhere) whose environment says they are this replica's: the
 * supervisor's BOA_SIGTERM_FILE, which names the replica's folder. Within a group already known to be
 * boa's (`inGroup`), the job, generation and rank boa gave it also do; across all processes they do not,
 * since another data dir's service numbers its jobs the same. The service's own process never is.
 */
export function replicaProcesses(
  replica: ReplicaKey & { readonly dir: string },
  procs: ProcSnapshot,
  inGroup?: number,
): ProcEntry[] {
  const sigtermFile = recordFile(replica.dir, replica.rank, 'sigterm');
  const given = (env: ReadonlyMap<string, string>) =>
    env.get('BOA_JOB_ID') === String(replica.jobId) &&
    env.get('BOA_GENERATION') === String(replica.generation) &&
    env.get('NODE_RANK') === String(replica.rank);
  return (procs() ?? []).filter(
    (p) =>
      !p.zombie &&
      p.pid !== process.pid &&
      (inGroup === undefined || p.pgrp === inGroup) &&
      (p.env.get('BOA_SIGTERM_FILE') === sigtermFile || (inGroup !== undefined && given(p.env))),
  );
}

/**
 * Pid reuse guard: a pid from a record is our replica only if that process's command line is the
 * supervisor's with this replica's folder, so a recycled pid is never adopted or signalled.
 */
export function isOurSupervisor(pid: number, dir: string, rank: number): boolean {
  if (!processExists(pid)) return false;
  try {
    if (existsSync('/proc')) {
      // The arguments one by one: jobs/1/10's supervisor must not pass for a record in jobs/1/1.
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      const script = args.findIndex((arg) => arg.endsWith('replica-supervisor.sh'));
      return script >= 0 && sameDir(args[script + 1], dir) && args[script + 2] === String(rank);
    }
    // Without /proc (macOS) only the joined command line: the folder and rank as whole words.
    const commandLine = execFileSync('ps', ['-o', 'args=', '-p', String(pid)], { encoding: 'utf8' });
    return commandLine.includes('replica-supervisor.sh') && commandLine.includes(` ${dir} ${rank} `);
  } catch {
    return false;
  }
}

/**
 * The folder with its links resolved, so one data dir named two ways (a symlink, macOS's /tmp and
 * /private/tmp) is one: a service restarted under the other name took its running replicas for gone,
 * ran them a second time and left the first running (a bind mount: sameDir's inode). As given when it
 * does not exist yet.
 */
export function realDir(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return resolve(dir);
  }
}

/** One folder, however each path names it: links resolved, or the same inode (a bind mount). */
function sameDir(a: string | undefined, b: string): boolean {
  if (a === undefined) return false;
  if (a === b || realDir(a) === realDir(b)) return true;
  try {
    const [x, y] = [statSync(a), statSync(b)];
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}

/** A replica's supervisor running without its record, and the process groups it holds. */
export interface UnrecordedSupervisor extends ReplicaKey {
  readonly pid: number;
  readonly dir: string;
  readonly groups: number[];
}

/**
 * Supervisors of replicas under `jobsDir` that run without their pid record (their folder removed by
 * hand while they ran), with the process groups they hold: theirs and their commands'. No record, no
 * adoption: a restarted service would start the replica a second time beside it. Linux (/proc) only.
 */
export function unrecordedSupervisors(jobsDir: string): UnrecordedSupervisor[] {
  if (!existsSync('/proc')) return [];
  const root = `${realDir(jobsDir)}/`;
  const found: UnrecordedSupervisor[] = [];
  const parents = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let args: string[];
    let stat: string;
    try {
      args = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // ended meanwhile
    }
    // pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses.
    const [state, ppid, pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (state === 'Z') continue;
    parents.set(Number(ppid), [...(parents.get(Number(ppid)) ?? []), Number(pgrp)]);
    const script = args.findIndex((arg) => arg.endsWith('replica-supervisor.sh'));
    const dir = script >= 0 ? args[script + 1] : undefined;
    const rank = script >= 0 ? args[script + 2] : undefined;
    if (!dir || !rank || !/^\d+$/.test(rank) || !`${realDir(dir)}/`.startsWith(root)) continue;
    if (readPid(dir, Number(rank))?.pid === Number(name)) continue;
    const key = {
      jobId: Number(basename(dirname(dir))),
      generation: Number(basename(dir)),
      rank: Number(rank),
    };
    found.push({ ...key, pid: Number(name), dir, groups: [Number(name)] });
  }
  for (const supervisor of found)
    for (const group of parents.get(supervisor.pid) ?? [])
      if (!supervisor.groups.includes(group)) supervisor.groups.push(group);
  return found;
}
