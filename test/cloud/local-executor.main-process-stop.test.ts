import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalExecutor } from '../../src/cloud/local/executor.ts';
import type { DesiredJob } from '../../src/service/ports.ts';
import { groupMembers } from '../helpers/replica-groups.ts';
import { localExecutorDirs } from './local-executor-dirs.ts';
import { pidFrom } from './pid-file.ts';
import { settle } from './local-executor-settle.ts';
import { behindShell, pgrpOf, signalsOf, workerPidFile, writeTrainer } from './trainer-with-worker.ts';

/**
 * A stop's SIGTERM goes to the command's main process only, as the kubelet sends it to a container's.
 * PyTorch's DataLoader workers are forked into the main process's group, and one that gets a SIGTERM
 * its parent did not send dies of it (torch/csrc/DataLoader.cpp, handler_SIGTERM); the main process
 * then raised in its training loop before it could checkpoint. Sent to the whole group, it did.
 */
const dirs = localExecutorDirs('boa-main-stop-');
afterEach(() => dirs.cleanup());

const job = (command: string[]): DesiredJob => ({
  jobId: 1,
  generation: 1,
  replicas: [{ jobId: 1, generation: 1, rank: 0, node: 'local-1', gpus: 1, workload: { command }, env: {} }],
});

/** Runs `command` (given the trainer's script and log), stops it, and returns its status and the log. */
async function stopTrainer(command: (script: string, log: string) => string[]) {
  const dataDir = dirs.temp();
  const { script, log } = writeTrainer(dataDir);
  const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 30 });
  try {
    const wanted = job(command(script, log));
    await settle(executor, [wanted], (s) => s[0]?.phase === 'running');
    const worker = await pidFrom(workerPidFile(log));
    const group = Number(readFileSync(join(dataDir, 'jobs/1/1/0.group'), 'utf8'));
    // A DataLoader worker's place: the command's own process group, not a session of its own.
    expect(pgrpOf(worker)).toBe(group);
    const stoppedAt = performance.now();
    expect((await executor.reconcile([]))[0]?.phase).toBe('stopping');
    // Wanted again, it is not taken back: its status says how the stop ended.
    const [ended] = await settle(executor, [wanted], (s) => s[0]?.phase === 'failed');
    expect(performance.now() - stoppedAt, 'waited for the SIGKILL').toBeLessThan(10_000);
    expect(groupMembers(group)).toEqual([]);
    return { ended, signals: signalsOf(log) };
  } finally {
    await executor.close();
  }
}

describe.runIf(existsSync('/proc/self/stat'))(
  'local executor: a stop of a command with workers in its group',
  () => {
    it('sends SIGTERM to the main process only; it ends its worker itself, checkpoints and exits 0, a clean stop', async () => {
      const { ended, signals } = await stopTrainer((script, log) => [process.execPath, script, log]);
      expect(signals, 'the worker got a SIGTERM its parent did not send').toEqual(['main', 'checkpointed']);
      expect(ended).toMatchObject({ phase: 'failed', exitCode: 0, interrupted: true });
      expect(ended?.reason).toMatch(/after boa's stop/);
    });

    it("behind a shell that does not exec it (dash's sh -c), the trainer gets it once the shell has died of it, its worker never", async () => {
      const { ended, signals } = await stopTrainer(behindShell);
      expect(signals).toEqual(['main', 'checkpointed']);
      // The shell's own death is the replica's exit; it is still boa's stop, not a failure.
      expect(ended).toMatchObject({ phase: 'failed', exitCode: 143, interrupted: true });
    });
  },
);
