/**
 * Signals to a local replica's processes, never to a stranger's: a recorded pid or process group id can
 * belong to someone else once the replica's processes are gone (a reused pid, a reboot).
 */
import { existsSync } from 'node:fs';
import {
  groupIsReplicas,
  isOurSupervisor,
  processExists,
  readGroup,
  replicaProcesses,
  type ReplicaKey,
} from './executor-records.ts';

export function signalQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone: the next reconcile sees it.
  }
}

/**
 * SIGKILL to the supervisor's process group (only when `owned`: a recycled pid's group is a stranger's)
 * and to the command's own, and to processes carrying the replica's environment.
 */
export function killReplicaGroups(
  replica: ReplicaKey & { readonly dir: string; readonly pid: number; readonly owned: boolean },
): void {
  // A supervisor killed while boa was down, its pid since reused, leaves its command running in a group
  // of its own: on Linux that group and those processes are known by their environment, so they are
  // ended even then. Without /proc (macOS) nothing can be told apart, and such a replica is left alone.
  if (!replica.owned && !existsSync('/proc/self/environ')) return;
  // A pid recycled by a process that leads its own group: that group is a stranger's, not ours.
  const stranger = processExists(replica.pid) && !isOurSupervisor(replica.pid, replica.dir, replica.rank);
  if (replica.owned && !stranger) signalQuietly(-replica.pid, 'SIGKILL');
  const group = readGroup(replica.dir, replica.rank);
  if (group !== undefined && group !== replica.pid && groupIsReplicas(group, replica))
    signalQuietly(-group, 'SIGKILL');
  // Processes that left both groups (torchrun's workers: Popen(start_new_session=True)) still carry the
  // replica's environment.
  for (const pid of replicaProcesses(replica)) signalQuietly(pid, 'SIGKILL');
}
