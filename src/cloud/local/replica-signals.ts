/**
 * Signals to a local replica's processes, never to a stranger's: a recorded pid or process group id can
 * belong to someone else once the replica's processes are gone (a reused pid, a reboot).
 */
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

/** SIGKILL to the supervisor's process group and to the command's own. */
export function killReplicaGroups(
  replica: ReplicaKey & { readonly dir: string; readonly pid: number },
): void {
  // A pid recycled by a process that leads its own group: that group is a stranger's, not ours.
  const stranger = processExists(replica.pid) && !isOurSupervisor(replica.pid, replica.dir, replica.rank);
  if (!stranger) signalQuietly(-replica.pid, 'SIGKILL');
  const group = readGroup(replica.dir, replica.rank);
  if (group !== undefined && group !== replica.pid && groupIsReplicas(group, replica))
    signalQuietly(-group, 'SIGKILL');
  // Processes that left both groups (torchrun's workers: Popen(start_new_session=True)) still carry the
  // replica's environment.
  for (const pid of replicaProcesses(replica)) signalQuietly(pid, 'SIGKILL');
}
