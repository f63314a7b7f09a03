import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { constants } from 'node:os';
import { join } from 'node:path';

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

export function recordFile(
  dir: string,
  rank: number,
  kind: 'pid' | 'exit' | 'stop' | 'log' | 'group' | 'sigterm' | 'url' | 'orphans' | 'termed' | 'abandoned',
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
  /**
   * The process groups whose leader got the stop's SIGTERM and whose orphans get it once that leader has
   * ended: from boa if the supervisor is lost (replica-signals.ts termOrphans), unless it had sent them
   * theirs (`<rank>.orphans`); removed once they have.
   */
  readonly leaders?: readonly number[];
}

export function readStop(dir: string, rank: number): StopRecord | undefined {
  const stop = readJson<StopRecord>(recordFile(dir, rank, 'stop'));
  if (stop?.leaders === undefined) return stop;
  const leaders = Array.isArray(stop.leaders) ? stop.leaders : [];
  return { ...stop, leaders: leaders.filter((g) => Number.isInteger(g) && g > 1) };
}

/** Whether the supervisor has sent the command's orphans their SIGTERM (replica-supervisor.sh). */
export const orphansTermed = (dir: string, rank: number) => existsSync(recordFile(dir, rank, 'orphans'));

/**
 * Whether the command's main process has been sent the stop's SIGTERM (`<rank>.termed`), by the
 * supervisor (said just before it sends it) or by boa for a supervisor lost before it did.
 */
export const mainTermed = (dir: string, rank: number) => existsSync(recordFile(dir, rank, 'termed'));

/** Says the main process has its SIGTERM; unwritable, boa may send it once more (after a restart). */
export function markMainTermed(dir: string, rank: number): void {
  try {
    writeFileSync(recordFile(dir, rank, 'termed'), '');
  } catch {
    // Its folder removed from outside: nothing is left to say it to.
  }
}

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
 * At a stop sent to a live supervisor: the command's group, whose orphans the supervisor owes the SIGTERM
 * once its leader ends, and boa does if the supervisor is lost before (replica-stop.ts).
 */
export function orphansOwed(dir: string, rank: number): number[] {
  const group = readGroup(dir, rank);
  return group === undefined ? [] : [group];
}

export function writeStop(
  dir: string,
  rank: number,
  at: number,
  sent?: { sent: true; leaders?: readonly number[] },
): void {
  const leaders = sent?.leaders?.length ? { leaders: sent.leaders } : {};
  writeRecord(recordFile(dir, rank, 'stop'), { at, ...(sent && { sent: true }), ...leaders });
}

/** Forgets a replica (its log stays, as the log location promises). */
export function removeRecords(dir: string, rank: number): void {
  for (const kind of ['pid', 'exit', 'stop', 'group', 'sigterm', 'url', 'orphans', 'termed'] as const)
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

/** The exit code a replica reports: its own, or 128 + the signal number (as a shell reports it). */
export function exitCodeOf(exit: ExitRecord): number {
  if (exit.code !== null) return exit.code;
  const number = exit.signal ? constants.signals[exit.signal as NodeJS.Signals] : undefined;
  return 128 + (number ?? 0);
}
