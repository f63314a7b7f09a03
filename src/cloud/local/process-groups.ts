/** A process's group and a group's liveness, from /proc where there is one. */
import { existsSync, readdirSync, readFileSync } from 'node:fs';

/** Its process group id, from /proc (undefined without it, or gone). */
export function groupOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses.
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
  } catch {
    return undefined;
  }
}

/**
 * Whether a process of group `group` runs. With /proc, one that is only a zombie (left to an init that
 * never reaps, as in some containers) does not: a lost supervisor's zombie would hold its stop for ever.
 */
export function groupLives(group: number): boolean {
  try {
    process.kill(-group, 0);
  } catch {
    return false;
  }
  if (!existsSync('/proc/self/stat')) return true;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(pgrp) === group && state !== 'Z') return true;
    } catch {
      // Gone meanwhile.
    }
  }
  return false;
}
