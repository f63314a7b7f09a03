/**
 * This machine's processes as /proc lists them, read at most once per reconcile pass and only when a
 * replica needs them: a scan costs tens of µs a process (its environment most), and each lost replica
 * scanned it several times a pass, every second of its grace, blocking the API for seconds on a busy host.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';

export interface ProcEntry {
  readonly pid: number;
  readonly ppid: number;
  readonly pgrp: number;
  /** A zombie holds nothing: it neither keeps a group alive nor says whose it is. */
  readonly zombie: boolean;
  /** The variables boa marks a replica with (BOA_SIGTERM_FILE, BOA_JOB_ID, ...), as far as readable. */
  readonly env: ReadonlyMap<string, string>;
}

/** The processes (undefined without /proc: macOS), read on the first call and kept for the pass. */
export type ProcSnapshot = () => readonly ProcEntry[] | undefined;

const MARKS = new Set(['BOA_SIGTERM_FILE', 'BOA_JOB_ID', 'BOA_GENERATION', 'NODE_RANK']);

export function procSnapshot(): ProcSnapshot {
  let read: { entries: readonly ProcEntry[] | undefined } | undefined;
  return () => (read ??= { entries: readProc() }).entries;
}

function readProc(): ProcEntry[] | undefined {
  if (!existsSync('/proc/self/environ')) return undefined;
  const entries: ProcEntry[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses.
    const [state, ppid, pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const zombie = state === 'Z';
    // The service's own environment is never a replica's.
    const env = zombie || pid === process.pid ? new Map<string, string>() : marksOf(name);
    entries.push({ pid, ppid: Number(ppid), pgrp: Number(pgrp), zombie, env });
  }
  return entries;
}

function marksOf(name: string): Map<string, string> {
  const marks = new Map<string, string>();
  try {
    const environ = readFileSync(`/proc/${name}/environ`, 'utf8');
    if (!environ.includes('BOA_')) return marks;
    for (const variable of environ.split('\0')) {
      const eq = variable.indexOf('=');
      const key = variable.slice(0, eq);
      if (eq > 0 && MARKS.has(key) && !marks.has(key)) marks.set(key, variable.slice(eq + 1));
    }
  } catch {
    // Gone meanwhile, or another user's: carries no replica's marks.
  }
  return marks;
}
