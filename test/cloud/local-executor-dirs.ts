import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killReplicaGroups } from '../helpers/replica-groups.ts';

/**
 * A local executor test's data dirs and the process groups it started by hand: `cleanup` (after each
 * test) kills those groups and every replica under the dirs, then removes the dirs.
 */
export function localExecutorDirs(prefix: string) {
  const dirs: string[] = [];
  const pids: number[] = [];
  return {
    /** The process groups tracked, in order. */
    pids: pids as readonly number[],
    temp(): string {
      const dir = mkdtempSync(join(tmpdir(), prefix));
      dirs.push(dir);
      return dir;
    },
    /** A process group to kill after the test (a fake supervisor). */
    track(pid: number): void {
      pids.push(pid);
    },
    cleanup(): void {
      for (const pid of pids.splice(0)) {
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
      for (const dir of dirs.splice(0)) {
        killReplicaGroups(join(dir, 'jobs'));
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
