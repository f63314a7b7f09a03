/**
 * Signals to a local replica's processes, never to a stranger's: a recorded pid or process group id can
 * belong to someone else once the replica's processes are gone (a reused pid, a reboot).
 */
import { readGroup, type ReplicaKey } from './executor-records.ts';
import { groupIsReplicas, isOurSupervisor, processExists, replicaProcesses } from './replica-processes.ts';
import { groupLives } from './process-groups.ts';
import type { ProcSnapshot } from './proc-snapshot.ts';

export function signalQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone: the next reconcile sees it.
  }
}

type Replica = ReplicaKey & { readonly dir: string; readonly pid: number; readonly owned: boolean };

/**
 * What is left of a replica to send `signal`: the supervisor's process group (only when `owned`: a
 * recycled pid's group is a stranger's) and the command's own, as -id, and processes carrying the
 * replica's environment outside them, by pid. Empty once nothing of it runs (zombies hold nothing and
 * count not). `procs`: the pass's view of /proc, read once for all replicas.
 */
export function replicaTargets(
  replica: Replica,
  procs: ProcSnapshot,
  signal: 'SIGTERM' | 'SIGKILL' = 'SIGKILL',
): number[] {
  // A supervisor killed while boa was down, its pid since reused, leaves its command running in a group
  // of its own: on Linux that group and those processes are known by their environment, so they are
  // ended even then. Without /proc (macOS) nothing can be told apart, and such a replica is left alone.
  if (!replica.owned && procs() === undefined) return [];
  const groups: number[] = [];
  // A pid recycled by a process that leads its own group: that group is a stranger's, not ours.
  const stranger = processExists(replica.pid) && !isOurSupervisor(replica.pid, replica.dir, replica.rank);
  if (replica.owned && !stranger && groupLives(replica.pid, procs)) groups.push(replica.pid);
  const group = readGroup(replica.dir, replica.rank);
  if (group !== undefined && group !== replica.pid && groupIsReplicas(group, replica, procs))
    groups.push(group);
  // Processes that left both groups (torchrun's workers: Popen(start_new_session=True)) still carry the
  // replica's environment. One inside a group signalled is not signalled again by pid.
  const outside = replicaProcesses(replica, procs).filter((p) => !groups.includes(p.pgrp));
  // A SIGTERM goes where the supervisor sends it, to the groups: what their processes started elsewhere
  // gets it from them (torchrun's agent forwards it to its workers), and a second one cuts a handler's
  // save short. Only one whose parent is none of the replica's processes (orphaned: its agent gone) has
  // nobody to pass it on, and gets it by pid. A SIGKILL reaches everything.
  const ours = new Set(outside.map((p) => p.pid));
  for (const p of procs() ?? []) if (groups.includes(p.pgrp)) ours.add(p.pid);
  const byPid = signal === 'SIGKILL' ? outside : outside.filter((p) => !ours.has(p.ppid));
  return [...groups.map((g) => -g), ...byPid.map((p) => p.pid)];
}

/** `signal` to each of replicaTargets: SIGTERM for a stop, SIGKILL once its grace is over. */
export function signalReplicaGroups(
  replica: Replica,
  signal: 'SIGTERM' | 'SIGKILL',
  procs: ProcSnapshot,
): void {
  for (const target of replicaTargets(replica, procs, signal)) signalQuietly(target, signal);
}

export function killReplicaGroups(replica: Replica, procs: ProcSnapshot): void {
  signalReplicaGroups(replica, 'SIGKILL', procs);
}
