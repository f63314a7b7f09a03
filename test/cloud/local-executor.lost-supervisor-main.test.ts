import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalExecutor } from '../../src/cloud/local/executor.ts';
import { groupMembers } from '../helpers/replica-groups.ts';
import { localExecutorDirs } from './local-executor-dirs.ts';
import { pidFrom } from './pid-file.ts';
import { settle } from './local-executor-settle.ts';
import { lostJob as job, loseSupervisor, until } from './lost-supervisor.ts';
import { behindShell, pgrpOf, signalsOf, workerPidFile, writeTrainer } from './trainer-with-worker.ts';

/**
 * A supervisor killed while boa was down leaves its command running; boa then sends the stop's SIGTERM
 * itself, where the supervisor would: to the command's main process while it runs, else to what of its
 * group has nobody to pass it on. Never to a worker forked into the group (a DataLoader worker dies of
 * a SIGTERM its parent did not send, and its trainer then fails before it checkpoints).
 */
const dirs = localExecutorDirs('boa-lost-main-');
afterEach(() => dirs.cleanup());

/** Loses the supervisor of `command` (given the trainer), once the trainer's worker runs in its group. */
async function lostTrainer(command: (script: string, log: string) => string[]) {
  const dataDir = dirs.temp();
  const { script, log } = writeTrainer(dataDir);
  const { group } = await loseSupervisor(dataDir, job(1, command(script, log)), (g) => dirs.track(g));
  const worker = await pidFrom(workerPidFile(log));
  expect(pgrpOf(worker)).toBe(group);
  return { dataDir, log, group };
}

/** Replaces the lost replica's generation and waits until the next one runs. */
async function replace(dataDir: string, group: number) {
  const boa = new LocalExecutor({ dataDir, terminationGraceSeconds: 30 });
  try {
    const next = job(2, ['sleep', '300']);
    const stoppedAt = performance.now();
    await settle(boa, [next], (s) => s.length === 1 && s[0]?.generation === 2);
    expect(performance.now() - stoppedAt, 'waited for the SIGKILL').toBeLessThan(10_000);
    expect(groupMembers(group)).toEqual([]);
    await settle(boa, [], (s) => s.length === 0);
  } finally {
    await boa.close();
  }
}

describe.runIf(existsSync('/proc/self/environ'))(
  "local executor: a lost supervisor's command with a worker",
  () => {
    it('gets the SIGTERM at its main process only, which ends its worker and checkpoints', async () => {
      const { dataDir, log, group } = await lostTrainer((script, log) => [process.execPath, script, log]);
      await replace(dataDir, group);
      expect(signalsOf(log)).toEqual(['main', 'checkpointed']);
    });

    it('its main process gone (a shell that did not exec the trainer), gets it at the orphaned trainer only', async () => {
      const { dataDir, log, group } = await lostTrainer(behindShell);
      // The shell, the group's leader, killed: the trainer and its worker run on in the group.
      process.kill(group, 'SIGKILL');
      await until(() => !groupMembers(group).includes(group));
      await replace(dataDir, group);
      expect(signalsOf(log)).toEqual(['main', 'checkpointed']);
    });

    it('behind a shell that did not exec the trainer and still runs, gets it at the shell, then at the orphaned trainer', async () => {
      const { dataDir, log, group } = await lostTrainer(behindShell);
      // The shell dies of the SIGTERM; its trainer, orphaned, got none (found in review: SIGKILLed at
      // the grace's end, its checkpoint lost).
      await replace(dataDir, group);
      expect(signalsOf(log)).toEqual(['main', 'checkpointed']);
    });
  },
);
