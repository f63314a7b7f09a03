/**
 * Signals to a local replica's processes, never to a stranger's: a recorded pid or process group id can
 * belong to someone else once the replica's processes are gone (a reused pid, a reboot).
 */
import { readGroup, type ReplicaKey } from './executor-records.ts';
import { groupIsReplicas, isOurSupervisor, processExists, replicaProcesses } from './replica-processes.ts';
import { groupLives } from './process-groups.ts';
import type { ProcEntry, ProcSnapshot } from './proc-snapshot.ts';

export function signalQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone: the next reconcile sees it.
  }
}

type Replica = ReplicaKey & { readonly dir: string; readonly pid: number; readonly owned: boolean };

/**
 * What is left of a replica to send `signal`: for a SIGKILL the supervisor's process group (only when
 * `owned`: a recycled pid's group is a stranger's) and the command's own, as -id, and processes carrying
 * the replica's environment outside them, by pid; for a SIGTERM only those of them nobody passes it on
 * to. Empty once nothing of it runs (zombies hold nothing and count not). `procs`: the pass's view of
 * /proc, read once for all replicas.
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
  if (signal === 'SIGKILL') return [...groups.map((g) => -g), ...outside.map((p) => p.pid)];
  // A SIGTERM goes where the supervisor sends it: to each group's main process, which ends what it
  // started itself (torchrun's agent its workers, PyTorch's main process its DataLoader workers, which
  // die of a SIGTERM their parent did not send). Only a process whose parent is none of the replica's
  // (orphaned: its main process or agent gone) has nobody to pass it on, and gets it itself; a second
  // one cuts a handler's save short.
  const ours = new Set(outside.map((p) => p.pid));
  for (const p of procs() ?? []) if (groups.includes(p.pgrp)) ours.add(p.pid);
  const orphaned = (p: ProcEntry) => !ours.has(p.ppid);
  const inGroups = groups.flatMap((g) => mainOrOrphans(g, procs, orphaned));
  return [...inGroups, ...outside.filter(orphaned).map((p) => p.pid)];
}

/**
 * Where a SIGTERM to group `group` goes: its leader (the command's main process: setsid made it the
 * group's) while it runs, else the group's processes that `orphaned` says have nobody to pass it on.
 * Without /proc, nothing tells them apart: the whole group, as -id.
 */
function mainOrOrphans(group: number, procs: ProcSnapshot, orphaned: (p: ProcEntry) => boolean): number[] {
  const entries = procs();
  if (entries === undefined) return [processExists(group) ? group : -group];
  if (entries.some((p) => p.pid === group && p.pgrp === group && !p.zombie)) return [group];
  return entries.filter((p) => p.pgrp === group && !p.zombie && orphaned(p)).map((p) => p.pid);
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
