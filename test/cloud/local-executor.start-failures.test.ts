/** Starts that fail or whose records cannot be written, and a finished rank's record kept until reported. */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalExecutor } from '../../src/cloud/local/executor.ts';
import { SPAWN_ATTEMPTS, SPAWN_FAILED_EXIT } from '../../src/cloud/local/spawn-failures.ts';
import { ReplicaLauncher } from '../../src/cloud/local/launcher.ts';
import { localExecutorDirs } from './local-executor-dirs.ts';
import { job } from './local-executor-fixture.ts';
import { settle } from './local-executor-settle.ts';
import type { DesiredJob } from '../../src/service/ports.ts';

const dirs = localExecutorDirs('boa-local-exec-');
afterEach(() => dirs.cleanup());
const temp = () => dirs.temp();

describe('local executor', () => {
  it('retries a replica whose start fails, and after a few failures in a row reports it failed, so its job is counted and not left holding GPUs', async () => {
    const dataDir = temp();
    const errors = ['spawn EMFILE', 'spawn EAGAIN', 'spawn EAGAIN', 'spawn EAGAIN'];
    let calls = 0;
    const failing = {
      launch: async () => errors[calls++] ?? 'spawn EAGAIN',
      close: async () => undefined,
    };
    const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1, launcher: failing });
    const desired = [job(['sleep', '30'])];
    for (let attempt = 1; attempt < SPAWN_ATTEMPTS; attempt++) {
      expect(await executor.reconcile(desired)).toEqual([]);
    }
    const [failed] = await executor.reconcile(desired);
    expect(failed).toMatchObject({
      phase: 'failed',
      exitCode: SPAWN_FAILED_EXIT,
      reason: `could not be started (${SPAWN_ATTEMPTS} attempts): spawn EAGAIN`,
    });
    // Reported, not retried, until its generation leaves: the job's restart is a new generation.
    expect(await executor.reconcile(desired)).toEqual([failed]);
    expect(calls).toBe(SPAWN_ATTEMPTS);
    const next: DesiredJob = {
      ...desired[0]!,
      generation: 2,
      replicas: [{ ...desired[0]!.replicas[0]!, generation: 2 }],
    };
    expect(await executor.reconcile([next])).toEqual([]);
    expect(calls).toBe(SPAWN_ATTEMPTS + 1);
  });

  it('tracks a replica whose pid record cannot be written (a full disk): started once, its record written when it can be', async () => {
    const dataDir = temp();
    const record = join(dataDir, 'jobs/1/1/0.pid');
    let launches = 0;
    const unrecordable = {
      // The replica starts, but its record's place is taken (as a full disk refuses the write).
      launch: async () => {
        launches += 1;
        mkdirSync(record, { recursive: true });
        const proc = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
        dirs.track(proc.pid as number);
        return { pid: proc.pid as number, exited: false, orphaned: false };
      },
      close: async () => undefined,
    };
    const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1, launcher: unrecordable });
    const desired = [job(['sleep', '30'])];
    for (let pass = 0; pass < 3; pass++) {
      const [status] = await executor.reconcile(desired);
      expect(status).toMatchObject({ phase: 'running' });
    }
    expect(launches).toBe(1);
    rmSync(record, { recursive: true });
    await executor.reconcile(desired);
    expect(JSON.parse(readFileSync(record, 'utf8'))).toMatchObject({
      pid: dirs.pids.at(-1),
      node: 'local-1',
    });
  });

  it('keeps the record of a rank that finished on its own until a pass has reported it: a restart in between reports it again', async () => {
    const dataDir = temp();
    const first = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
    const done = job([process.execPath, '-e', 'process.exit(0)']);
    await settle(first, [done], (s) => s.some((r) => r.phase === 'succeeded'));
    // Rescaled as it finished: generation 2 is wanted, generation 1's rank 0 said once more.
    const next: DesiredJob = { jobId: 1, generation: 2, replicas: [] };
    const said = await first.reconcile([next]);
    expect(said).toEqual([expect.objectContaining({ generation: 1, rank: 0, phase: 'succeeded' })]);
    // The service stops before it reads that pass's statuses: the next start hears it again.
    await first.close();
    const second = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
    expect(await second.reconcile([next])).toEqual([
      expect.objectContaining({ generation: 1, rank: 0, phase: 'succeeded' }),
    ]);
    // Once returned, it is forgotten at the pass after.
    expect(await second.reconcile([next])).toEqual([]);
    await second.close();
  });

  it('retries a start that failed at the next reconcile, which runs it', async () => {
    const dataDir = temp();
    let failedOnce = false;
    const launcher = new ReplicaLauncher();
    const flaky = {
      launch: (...args: Parameters<typeof launcher.launch>) => {
        if (!failedOnce) {
          failedOnce = true;
          // The launcher's own error: nothing was spawned (a lost answer waits: local-supervisor-pid-record.test.ts).
          return Promise.resolve('spawn EAGAIN');
        }
        return launcher.launch(...args);
      },
      close: () => launcher.close(),
    };
    const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1, launcher: flaky });
    const desired = [job(['sleep', '30'])];
    expect(await executor.reconcile(desired)).toEqual([]);
    const [status] = await executor.reconcile(desired);
    expect(status).toMatchObject({ phase: 'running' });
    await settle(executor, [], (s) => s.length === 0);
    await executor.close();
  });
});
