import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalExecutor } from '../../src/cloud/local/executor.ts';
import { processExists } from '../../src/cloud/local/replica-processes.ts';
import { groupMembers } from '../helpers/replica-groups.ts';
import { localExecutorDirs } from './local-executor-dirs.ts';
import { settle } from './local-executor-settle.ts';
import { lostJob as job, loseSupervisor } from './lost-supervisor.ts';

/**
 * A supervisor killed while boa was down, its pid then reused by another program: the stranger is never
 * signalled, and the replica's command, still running in its own group, is not left behind.
 */
const dirs = localExecutorDirs('boa-lost-supervisor-');
afterEach(() => dirs.cleanup());

describe.runIf(existsSync('/proc/self/environ'))(
  'local executor: a lost supervisor whose pid was reused',
  () => {
    it("stops the replica's command still running, and never signals the process holding the pid", async () => {
      const dataDir = dirs.temp();
      const dir = join(dataDir, 'jobs/1/1');
      // boa is down; the supervisor is killed alone (its command runs on in its own session)...
      const { group } = await loseSupervisor(dataDir, job(1), (g) => dirs.track(g));
      // ...and its pid is another program's by the time boa starts again.
      const stranger = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
      dirs.track(stranger.pid as number);
      writeFileSync(join(dir, '0.pid'), JSON.stringify({ pid: stranger.pid, node: 'local-1', startedAt: 0 }));
      expect(groupMembers(group).length).toBeGreaterThan(0);

      const second = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
      const [gone] = await second.reconcile([job(1)]);
      expect(gone).toMatchObject({ phase: 'failed', interrupted: true });
      // Its job resumes as a new generation; the old command must not run beside it.
      await settle(second, [job(2)], (s) => s.length === 1 && s[0]?.generation === 2);
      expect(groupMembers(group), 'the lost replica still runs beside its next generation').toEqual([]);
      expect(processExists(stranger.pid as number)).toBe(true);
      await settle(second, [], (s) => s.length === 0);
      await second.close();
    });
  },
);
