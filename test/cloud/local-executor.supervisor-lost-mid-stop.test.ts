import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalExecutor } from '../../src/cloud/local/executor.ts';
import { processExists } from '../../src/cloud/local/replica-processes.ts';
import { groupMembers } from '../helpers/replica-groups.ts';
import { localExecutorDirs } from './local-executor-dirs.ts';
import { pidFrom } from './pid-file.ts';
import { settle } from './local-executor-settle.ts';
import { lostJob as job, until } from './lost-supervisor.ts';
import { signalsOf, workerPidFile, writeTrainer } from './trainer-with-worker.ts';

/**
 * A supervisor alive when boa sends the stop's SIGTERM, killed alone before its command's main process
 * (a shell that did not exec the trainer) has ended: the trainer the shell leaves gets the SIGTERM from
 * boa, as the supervisor would have sent it; and never twice, if the supervisor had sent it already.
 * One lost before it passed the SIGTERM on at all: its command gets it from boa.
 */
const dirs = localExecutorDirs('boa-lost-mid-stop-');
afterEach(() => dirs.cleanup());

/**
 * Runs `command` (given the trainer's script and log) under a supervisor, calls `beforeStop` and stops
 * it, calls `meanwhile` with the supervisor's pid, and lets the stop finish; returns the trainer's
 * signal log.
 */
async function stopAndLoseSupervisor(
  command: (script: string, log: string) => string[],
  meanwhile: (supervisor: number, log: string) => Promise<void>,
  beforeStop: (supervisor: number) => void = () => {},
) {
  const dataDir = dirs.temp();
  const dir = join(dataDir, 'jobs/1/1');
  const { script, log } = writeTrainer(dataDir);
  const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 8 });
  try {
    await settle(executor, [job(1, command(script, log))], (s) => s[0]?.phase === 'running');
    await pidFrom(workerPidFile(log));
    const group = Number(readFileSync(join(dir, '0.group'), 'utf8'));
    dirs.track(group);
    const supervisor = (JSON.parse(readFileSync(join(dir, '0.pid'), 'utf8')) as { pid: number }).pid;
    beforeStop(supervisor);
    expect((await executor.reconcile([]))[0]?.phase).toBe('stopping');
    await meanwhile(supervisor, log);
    const stoppedAt = performance.now();
    await settle(executor, [], (s) => s.length === 0);
    expect(performance.now() - stoppedAt, 'waited for the SIGKILL').toBeLessThan(6_000);
    expect(groupMembers(group)).toEqual([]);
    return signalsOf(log);
  } finally {
    await executor.close();
  }
}

async function killSupervisor(supervisor: number) {
  process.kill(supervisor, 'SIGKILL');
  await until(() => !processExists(supervisor));
}

describe.runIf(existsSync('/proc/self/stat'))('local executor: a supervisor lost during a stop', () => {
  it('lost before the shell ends: the orphaned trainer gets the SIGTERM from boa', async () => {
    // The shell ends on the SIGTERM (saying it got it in <log>.shell) only once the supervisor is gone
    // (<log>.go), and passes none on.
    const slowShell = (script: string, log: string) => [
      'sh',
      '-c',
      'trap \': >"$2.shell"; until [ -e "$2.go" ]; do sleep 0.1; done; exit 143\' TERM; "$0" "$1" "$2" & wait',
      process.execPath,
      script,
      log,
    ];
    const signals = await stopAndLoseSupervisor(slowShell, async (supervisor, log) => {
      await until(() => existsSync(`${log}.shell`));
      await killSupervisor(supervisor);
      writeFileSync(`${log}.go`, '');
    });
    expect(signals).toEqual(['main', 'checkpointed']);
  });

  it('lost after it sent the orphans theirs: boa sends none again', async () => {
    // The trainer saves for 3 s, so boa sees the supervisor lost while the trainer runs on.
    const behindShellSlowSave = (script: string, log: string) => [
      'sh',
      '-c',
      '"$0" "$1" "$2" main 3000; echo "ended $?"',
      process.execPath,
      script,
      log,
    ];
    const signals = await stopAndLoseSupervisor(behindShellSlowSave, async (supervisor, log) => {
      await until(() => signalsOf(log).includes('main'));
      await killSupervisor(supervisor);
    });
    expect(signals).toEqual(['main', 'checkpointed']);
  });

  it('lost before it passed the SIGTERM on: its command gets it from boa', async () => {
    // Stopped (SIGSTOP), the supervisor holds boa's SIGTERM pending and dies of the SIGKILL without
    // running its trap: as one does when the stop comes in the instant between starting the command
    // and setting the trap that passes it on (a CI run's demo kept such a command for the whole grace).
    const trainer = (script: string, log: string) => [process.execPath, script, log];
    const signals = await stopAndLoseSupervisor(trainer, killSupervisor, (supervisor) =>
      process.kill(supervisor, 'SIGSTOP'),
    );
    expect(signals).toEqual(['main', 'checkpointed']);
  });

  it('lost before it passed the SIGTERM on, its folder removed: the command gets it once', async () => {
    // No `.termed` record can be written: boa remembers it sent it, or it would send it every pass.
    const trainer = (script: string, log: string) => [process.execPath, script, log, 'main', '1500'];
    const signals = await stopAndLoseSupervisor(
      trainer,
      async (supervisor, log) => {
        await killSupervisor(supervisor);
        rmSync(join(dirname(log), 'jobs/1'), { recursive: true, force: true });
      },
      (supervisor) => process.kill(supervisor, 'SIGSTOP'),
    );
    expect(signals).toEqual(['main', 'checkpointed']);
  });
});
