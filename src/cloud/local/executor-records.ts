import { execFileSync } from 'node:child_process';
import {
  closeSync,
  existsSync,
  fstatSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { constants } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import type { ProcEntry, ProcSnapshot } from './proc-snapshot.ts';

/**
 * The local executor's records on disk, one folder per job generation: DATA_DIR/jobs/<id>/<generation>/
 * with <rank>.pid (the replica's supervisor), <rank>.exit (how it ended), <rank>.stop (when SIGTERM was
 * sent), <rank>.url (where boa is now: its BOA_URL_FILE) and <rank>.log. They are the executor's truth across restarts: what they list is adopted.
 */
export interface PidRecord {
  readonly pid: number;
  readonly node: string;
  readonly startedAt: number;
  /** The BOA_URL it was started with (records from before 2026-12: absent). */
  readonly boaUrl?: string;
}

export interface ExitRecord {
  readonly code: number | null;
  readonly signal: string | null;
  readonly reason?: string;
  /**
   * The supervisor had received a SIGTERM before the command ended, or the command exited 0 after
   * writing to <rank>.sigterm that one reached it (records older than it: absent).
   */
  readonly stopped?: boolean;
  /**
   * The code is the command's own exit status, not the supervisor's (its look-up of the program, a
   * working directory it could not enter); records from before 2026-12-01: absent.
   */
  readonly command?: boolean;
  readonly at: number;
}

export interface ReplicaKey {
  readonly jobId: number;
  readonly generation: number;
  readonly rank: number;
}

export function generationDir(jobsDir: string, jobId: number, generation: number): string {
  return join(jobsDir, String(jobId), String(generation));
}

/** The job's generations with a records folder, newest first. */
export function generationsOf(jobsDir: string, jobId: number): number[] {
  let names: string[];
  try {
    names = readdirSync(join(jobsDir, String(jobId)));
  } catch {
    return [];
  }
  return names
    .filter((n) => /^\d+$/.test(n))
    .map(Number)
    .sort((a, b) => b - a);
}

/** A log's read from its end: a long run's log is not read whole for its last lines. */
const LOG_TAIL_BYTES = 1 << 20;

/** The last `lines` lines of a log file (at most its last MiB); undefined when there is no such file. */
export function readLogTail(file: string, lines: number): string | undefined {
  return readLogTailBytes(file, lines)?.bytes.toString('utf8');
}

/**
 * readLogTail's bytes as the file holds them, and the file's size when read: where a follower reads on
 * from. Lines are found by their newline bytes, never by decoding: a log that is not UTF-8 (a Latin-1
 * tool, binary output) or a read cutting a character in two must not move where its text starts.
 */
export function readLogTailBytes(file: string, lines: number): { bytes: Buffer; size: number } | undefined {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const size = fstatSync(fd).size;
    const length = Math.min(size, LOG_TAIL_BYTES);
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    // A cut at the MiB mark leaves a partial first line: dropped unless the whole file was read, or it
    // is all there is (progress bars redrawn with \r write one long line).
    const newline = buffer.indexOf(0x0a);
    const first = length < size && newline !== -1 && newline < length - 1 ? newline + 1 : 0;
    let from = lines === 0 ? length : first;
    // Back from the end, over `lines` newlines (the last byte's own newline ends the last line).
    for (let i = length - 2, seen = 0; lines > 0 && i >= first; i--)
      if (buffer[i] === 0x0a && ++seen === lines) {
        from = i + 1;
        break;
      }
    return { bytes: buffer.subarray(from), size };
  } finally {
    closeSync(fd);
  }
}

export function recordFile(
  dir: string,
  rank: number,
  kind: 'pid' | 'exit' | 'stop' | 'log' | 'group' | 'sigterm' | 'url',
): string {
  return join(dir, `${rank}.${kind}`);
}

function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch {
    // Missing, or (never with rename-written records) half written: treated as absent.
    return undefined;
  }
}

export const readPid = (dir: string, rank: number) => readJson<PidRecord>(recordFile(dir, rank, 'pid'));
/**
 * How the replica ended, or undefined while that is unknown: no record yet, or one that is not an exit
 * record (empty or cut short by a full disk, null, a field missing). Unknown is never a success or a
 * failure: a replica whose supervisor is gone without a valid record reads as interrupted, and its job
 * resumes as a new generation.
 */
export function readExit(dir: string, rank: number): ExitRecord | undefined {
  const exit = readJson<Partial<ExitRecord> | null>(recordFile(dir, rank, 'exit'));
  if (typeof exit !== 'object' || exit === null) return undefined;
  const { code, signal, at } = exit;
  const valid =
    (Number.isInteger(code) || (code === null && typeof signal === 'string')) &&
    (signal === null || typeof signal === 'string') &&
    Number.isFinite(at);
  return valid ? (exit as ExitRecord) : undefined;
}
/** boa's stop of a replica: when, and whether its SIGTERM was sent (recorded before and after). */
export interface StopRecord {
  readonly at: number;
  readonly sent?: true;
}

export const readStop = (dir: string, rank: number) => readJson<StopRecord>(recordFile(dir, rank, 'stop'));

/** The command's own process group (replica-supervisor.sh runs it in a session of its own). */
export function readGroup(dir: string, rank: number): number | undefined {
  try {
    const pid = Number(readFileSync(recordFile(dir, rank, 'group'), 'utf8'));
    return Number.isInteger(pid) && pid > 1 ? pid : undefined;
  } catch {
    return undefined;
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

export function writeStop(dir: string, rank: number, at: number, sent?: { sent: true }): void {
  writeRecord(recordFile(dir, rank, 'stop'), { at, ...sent });
}

/** Forgets a replica (its log stays, as the log location promises). */
export function removeRecords(dir: string, rank: number): void {
  for (const kind of ['pid', 'exit', 'stop', 'group', 'sigterm', 'url'] as const)
    rmSync(recordFile(dir, rank, kind), { force: true });
}

/** Every replica with a pid record under jobsDir: what a new executor instance adopts. */
export function scanRecords(jobsDir: string): Array<ReplicaKey & { dir: string; record: PidRecord }> {
  const out: Array<ReplicaKey & { dir: string; record: PidRecord }> = [];
  if (!existsSync(jobsDir)) return out;
  for (const job of readdirSync(jobsDir)) {
    if (!/^\d+$/.test(job)) continue;
    for (const generation of readdirSync(join(jobsDir, job))) {
      if (!/^\d+$/.test(generation)) continue;
      const dir = join(jobsDir, job, generation);
      for (const file of readdirSync(dir)) {
        const match = /^(\d+)\.pid$/.exec(file);
        if (!match) continue;
        const rank = Number(match[1]);
        const record = readPid(dir, rank);
        if (record) out.push({ jobId: Number(job), generation: Number(generation), rank, dir, record });
      }
    }
  }
  return out;
}

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

/** Written whole or not at all (rename), so a reader never sees half a record. */
export function writeRecord(file: string, value: unknown): void {
  writeWhole(file, JSON.stringify(value));
}

function writeWhole(file: string, text: string): void {
  writeFileSync(`${file}.tmp`, text);
  renameSync(`${file}.tmp`, file);
}

/**
 * <rank>.url, the replica's BOA_URL_FILE: the address boa is at now, which boa's job clients re-read
 * when BOA_URL stops answering (a restart at another --port or --public-url rewrites it). Plain text,
 * written whole: a client reading it mid-write would take half a URL for the new address.
 */
export function writeUrlFile(dir: string, rank: number, url: string): void {
  writeWhole(recordFile(dir, rank, 'url'), `${url}\n`);
}

/** What <rank>.url says, or undefined without one (a replica started before boa wrote it). */
export function readUrlFile(dir: string, rank: number): string | undefined {
  try {
    return readFileSync(recordFile(dir, rank, 'url'), 'utf8').trim();
  } catch {
    return undefined;
  }
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

/** The exit code a replica reports: its own, or 128 + the signal number (as a shell reports it). */
export function exitCodeOf(exit: ExitRecord): number {
  if (exit.code !== null) return exit.code;
  const number = exit.signal ? constants.signals[exit.signal as NodeJS.Signals] : undefined;
  return 128 + (number ?? 0);
}
