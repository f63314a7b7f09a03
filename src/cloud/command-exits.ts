/**
 * Exits 127 (command not found) and 126 (found, not executable) of the job's own command: the same
 * command fails the same way at every start (a wrapper that exits 127 because a tool it calls is
 * missing too), so a restart would only pay for GPUs and a start-up again. Each executor says where
 * an exit is the command's own (not the local executor's own look-up of the program, or a replica it
 * could not start, which are retried: the file may come back); the service then fails the job at once.
 *
 * `where`: where the command and its PATH are to be checked ("in the image X", "on this machine ...").
 * Undefined for any other exit code.
 */
export function notRestartable(
  exitCode: number | null | undefined,
  where: string,
  /** The program could not be started at all (containerd's StartError, exit 128): said so, not as an exit. */
  notStarted = false,
): string | undefined {
  const what =
    exitCode === 127
      ? 'a command the job ran was not found'
      : exitCode === 126
        ? 'a command the job ran is not executable'
        : undefined;
  if (what === undefined) return undefined;
  const means = notStarted
    ? `the container's command could not start (${exitCode === 127 ? 'not found' : 'not executable'})`
    : `exit ${exitCode} means ${what}`;
  return `not restarted: ${means}, which fails the same way at every start; check the command and the PATH ${where} (the job's output names the command), then submit it again`;
}
