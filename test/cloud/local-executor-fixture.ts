import { readdirSync, readFileSync } from 'node:fs';
import { expect } from 'vitest';
import type { DesiredJob } from '../../src/service/ports.ts';

/** Job 1, generation 1: one replica of one GPU on local-1, running `command`. */
export const job = (command: string[]): DesiredJob => ({
  jobId: 1,
  generation: 1,
  replicas: [{ jobId: 1, generation: 1, rank: 0, node: 'local-1', gpus: 1, workload: { command }, env: {} }],
});

/** A process's command line ('' once it is gone): a spawned child has its parent's until it execs. */
export const cmdlineOf = (pid: number): string => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
};

/** Waits up to 20 s (spawns on a loaded machine take seconds; a wait that holds early costs nothing). */
export async function until(condition: () => boolean) {
  for (let i = 0; i < 800 && !condition(); i++) await new Promise((r) => setTimeout(r, 25));
  expect(condition()).toBe(true);
}

/**
 * The replica supervisors running for this data dir. A supervisor's shell forks before it execs the
 * command, and the fork carries the same command line until then: only supervisors whose parent is not
 * one of them count (under load the fork was caught as a second supervisor).
 */
export function supervisorsOf(dataDir: string): number[] {
  const all = supervisorProcesses(dataDir);
  return all.filter((pid) => {
    try {
      return !all.includes(parentOf(pid));
    } catch {
      return false; // ended meanwhile
    }
  });
}

/** Live supervisor processes of this data dir's replica (by their command line in /proc). */
function supervisorProcesses(dataDir: string): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const commandLine = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (commandLine.includes('replica-supervisor.sh') && commandLine.includes(dataDir))
        out.push(Number(entry));
    } catch {
      // ended meanwhile
    }
  }
  return out;
}

export function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}
