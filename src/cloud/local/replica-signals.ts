/**
 * Signals to a local replica's processes, never to a stranger's: a recorded pid or process group id can
 * belong to someone else once the replica's processes are gone (a reused pid, a reboot).
 */
import { markMainTermed, readGroup, type ReplicaKey } from './executor-records.ts';
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
  const parts = replicaParts(replica, procs);
  if (parts === undefined) return [];
  const { groups, outside, orphaned } = parts;
  if (signal === 'SIGKILL') return [...groups.map((g) => -g), ...outside.map((p) => p.pid)];
  // A SIGTERM goes where the supervisor sends it: to each group's main process, which ends what it
  // started itself (torchrun's agent its workers, PyTorch's main process its DataLoader workers, which
  // die of a SIGTERM their parent did not send). Only a process whose parent is none of the replica's
  // (orphaned: its main process or agent gone) has nobody to pass it on, and gets it itself; a second
  // one cuts a handler's save short.
  const inGroups = groups.flatMap((g) => mainOrOrphans(g, procs, orphaned));
  return [...inGroups, ...outside.filter(orphaned).map((p) => p.pid)];
}

/**
 * The replica's groups still running (-id targets for a SIGKILL), the processes carrying its environment
 * outside them, and which of its processes have no parent among them. Undefined when nothing of it can
 * be told apart from a stranger's.
 */
function replicaParts(
  replica: Replica,
  procs: ProcSnapshot,
): { groups: number[]; outside: ProcEntry[]; orphaned: (p: ProcEntry) => boolean } | undefined {
  // A supervisor killed while boa was down, its pid since reused, leaves its command running in a group
  // of its own: on Linux that group and those processes are known by their environment, so they are
  // ended even then. Without /proc (macOS) nothing can be told apart, and such a replica is left alone.
  if (!replica.owned && procs() === undefined) return undefined;
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
  const ours = new Set(outside.map((p) => p.pid));
  for (const p of procs() ?? []) if (groups.includes(p.pgrp)) ours.add(p.pid);
  return { groups, outside, orphaned: (p: ProcEntry) => !ours.has(p.ppid) };
}

/**
 * Where a SIGTERM to group `group` goes: its leader (the command's main process: setsid made it the
 * group's) while it runs, else the group's processes that `orphaned` says have nobody to pass it on.
 * Without /proc, nothing tells them apart: the whole group, as -id.
 */
function mainOrOrphans(group: number, procs: ProcSnapshot, orphaned: (p: ProcEntry) => boolean): number[] {
  if (leaderRuns(group, procs)) return [group];
  const entries = procs();
  if (entries === undefined) return [-group];
  return entries.filter((p) => p.pgrp === group && !p.zombie && orphaned(p)).map((p) => p.pid);
}

function leaderRuns(group: number, procs: ProcSnapshot): boolean {
  const entries = procs();
  if (entries === undefined) return processExists(group);
  return entries.some((p) => p.pid === group && p.pgrp === group && !p.zombie);
}

/**
 * A lost supervisor's stop: the SIGTERM to what is left of its replica (replicaTargets), said first in
 * `<rank>.termed` as the supervisor says it, so it is sent once. Returns the groups whose leader got
 * it: their orphans get it once the leader has ended (termOrphans), as the supervisor's term_orphans
 * sends it.
 */
export function termLostReplica(replica: Replica, procs: ProcSnapshot): number[] {
  markMainTermed(replica.dir, replica.rank);
  const targets = replicaTargets(replica, procs, 'SIGTERM');
  for (const target of targets) signalQuietly(target, 'SIGTERM');
  return targets.filter((t) => t > 0 && t === readGroup(replica.dir, replica.rank));
}

/**
 * Of `leaders` (groups whose leader got a lost supervisor's SIGTERM), those whose leader has ended since:
 * their processes with nobody to pass it on get it now, once (a shell that did not exec its command dies
 * of the SIGTERM and leaves its trainer orphaned). Returns the groups whose leader still runs.
 */
export function termOrphans(replica: Replica, leaders: readonly number[], procs: ProcSnapshot): number[] {
  const parts = replicaParts(replica, procs);
  if (parts === undefined) return [];
  const waiting: number[] = [];
  // A group no longer the replica's (all of it ended) is dropped: its id may be a stranger's by now.
  for (const group of leaders.filter((g) => parts.groups.includes(g))) {
    if (leaderRuns(group, procs)) waiting.push(group);
    else for (const target of mainOrOrphans(group, procs, parts.orphaned)) signalQuietly(target, 'SIGTERM');
  }
  return waiting;
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
