/** Test helpers for the local executor's real processes: which run a command, and waiting on them. */
import { readdirSync, readFileSync } from 'node:fs';

/** The pids whose command line is exactly `argv` (read from /proc: no pgrep needed). */
export function commandPids(argv: readonly string[]): number[] {
  const wanted = `${argv.join('\0')}\0`;
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        return readFileSync(`/proc/${entry}/cmdline`, 'utf8') === wanted;
      } catch {
        return false; // ended meanwhile
      }
    })
    .map(Number);
}

/**
 * Waits up to 20 s for `done`, polling every 25 ms; throws naming `what` if it never holds. Long, as it
 * returns once `done` holds: replicas started on a loaded machine take seconds.
 */
export async function waitFor(what: string, done: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 800; i++) {
    if (await done()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}
