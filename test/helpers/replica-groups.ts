import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The process groups of every local replica recorded under a data dir's jobs/ folder: each supervisor's
 * (its <rank>.pid) and its command's own (<rank>.group, a session of its own where setsid exists).
 */
export function replicaGroups(jobsDir: string): number[] {
  const groups: number[] = [];
  if (!existsSync(jobsDir)) return groups;
  for (const job of readdirSync(jobsDir)) {
    // Job folders only: jobs/ also holds the highest id handed out (.highest-id).
    if (!/^\d+$/.test(job)) continue;
    for (const generation of readdirSync(join(jobsDir, job))) {
      // Generation folders only: a job's folder also holds its checkpoint folder.
      if (!/^\d+$/.test(generation)) continue;
      const dir = join(jobsDir, job, generation);
      for (const file of readdirSync(dir)) {
        try {
          const text = readFileSync(join(dir, file), 'utf8');
          if (file.endsWith('.pid')) groups.push((JSON.parse(text) as { pid: number }).pid);
          else if (file.endsWith('.group')) groups.push(Number(text));
        } catch {
          // Removed or replaced while read.
        }
      }
    }
  }
  return groups.filter((pid) => Number.isInteger(pid) && pid > 1);
}

/** SIGKILL to every replica's process groups under a jobs/ folder: nothing a test started outlives it. */
export function killReplicaGroups(jobsDir: string): void {
  for (const pid of replicaGroups(jobsDir)) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/**
 * The processes of this group that still run. A zombie does not: its parent is gone and it waits for an
 * init that may reap it late (some containers' never do), holding nothing. Linux (/proc) only.
 */
export function groupMembers(group: number): number[] {
  const members: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // ended meanwhile
    }
    // pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(pgrp) === group && state !== 'Z') members.push(Number(name));
  }
  return members;
}
