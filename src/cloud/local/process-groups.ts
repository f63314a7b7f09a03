/** A process group's liveness. */
import type { ProcSnapshot } from './proc-snapshot.ts';

/**
 * Whether a process of group `group` runs. With /proc, one that is only a zombie (left to an init that
 * never reaps, as in some containers) does not: a lost supervisor's zombie would hold its stop for ever.
 */
export function groupLives(group: number, procs: ProcSnapshot): boolean {
  try {
    process.kill(-group, 0); // a group with no process left (the usual case) needs no look
  } catch {
    return false;
  }
  const entries = procs();
  return entries === undefined || entries.some((p) => p.pgrp === group && !p.zombie);
}
