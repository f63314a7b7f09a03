import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { LocalExecutor } from '../../src/cloud/local/executor.ts';
import { readPid } from '../../src/cloud/local/executor-records.ts';
import { ReplicaLauncher } from '../../src/cloud/local/launcher.ts';
import { processExists } from '../../src/cloud/local/replica-processes.ts';
import { LOST_START_WAIT_MS } from '../../src/cloud/local/spawn-failures.ts';
import type { DesiredJob } from '../../src/service/ports.ts';
import { commandMark } from './command-mark.ts';
import { commandPids, waitFor } from './local-commands.ts';
import { localExecutorDirs } from './local-executor-dirs.ts';

/**
 * <rank>.pid when a replica is started again in the same folder: a start reported failed although its
 * launcher had spawned the supervisor (the launcher killed before it answered, or its exit seen before
 * its answer), and a restart after a stray was stopped, both start the same job, generation and rank
 * again. The supervisor keeps a record it finds, so an earlier start's record named another process.
 */
const dirs = localExecutorDirs('boa-pidrec-');
afterEach(() => dirs.cleanup());

const MARK = commandMark(3094);
/** The pids running the job's command. */
const commands = () => commandPids(MARK);

const jobOf = (command: string[]): DesiredJob => ({
  jobId: 1,
  generation: 1,
  replicas: [{ jobId: 1, generation: 1, rank: 0, node: 'local-1', gpus: 1, workload: { command }, env: {} }],
});

/** A real launcher whose answers `lose` may replace: a string (the launcher gone) or never (boa killed). */
function losingLauncher(lose: (n: number, pid: number) => 'failed' | 'hang' | undefined) {
  const real = new ReplicaLauncher();
  let n = 0;
  return {
    real,
    async launch(...args: Parameters<ReplicaLauncher['launch']>) {
      const launched = await real.launch(...args);
      if (typeof launched === 'string') return launched;
      const lost = lose(++n, launched.pid);
      if (lost === 'failed') return 'replica launcher ended: SIGKILL';
      if (lost === 'hang') return new Promise<never>(() => undefined);
      return launched;
    },
    close: () => real.close(),
  };
}

/** Whatever a failed test left running. */
function killAll(pids: readonly number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

/** Stopped by boa like any replica: nothing of it is left running. */
async function stopAndWait(executor: LocalExecutor): Promise<void> {
  await stopAll(executor);
  await waitFor('the replica stopped', () => commands().length === 0);
}

async function stopAll(executor: LocalExecutor): Promise<void> {
  for (let i = 0; i < 200 && (await executor.reconcile([])).length > 0; i++)
    await new Promise((r) => setTimeout(r, 25));
  await executor.close();
}

/** An executor whose first launch spawns the supervisor but reports the start failed (the launcher gone). */
function firstStartLost() {
  const dataDir = dirs.temp();
  const spawned: number[] = [];
  const launcher = losingLauncher((n, pid) => {
    spawned.push(pid);
    return n === 1 ? 'failed' : undefined;
  });
  const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 2, launcher });
  return { dir: join(dataDir, 'jobs', '1', '1'), job: jobOf(MARK), spawned, executor };
}

it('a start reported failed whose supervisor runs all the same: tracked, not started a second time', async () => {
  const { dir, job, spawned, executor } = firstStartLost();
  try {
    await executor.reconcile([job]);
    // The lost start's supervisor records itself (no record was there).
    await waitFor('its record', () => readPid(dir, 0)?.pid === spawned[0]);
    let statuses = await executor.reconcile([job]);
    for (let i = 0; i < 10; i++) {
      await new Promise((r) => setTimeout(r, 50));
      statuses = await executor.reconcile([job]);
    }
    expect(commands().length, 'copies of the replica running').toBe(1);
    expect(statuses.map((s) => s.phase)).toEqual(['running']);
    const recorded = readPid(dir, 0)?.pid;
    expect(recorded !== undefined && processExists(recorded), 'the record names a live supervisor').toBe(
      true,
    );
    await stopAndWait(executor);
  } finally {
    await executor.close();
    killAll([...spawned, ...commands()]);
  }
}, 120_000);

it('a start reported failed, retried at once before its supervisor has written its record: one copy runs', async () => {
  const { job, spawned, executor } = firstStartLost();
  try {
    // Reconciles back to back, as a service with a short tick or a reconcile on an event makes them.
    let statuses = await executor.reconcile([job]);
    for (let i = 0; i < 40; i++) {
      statuses = await executor.reconcile([job]);
      await new Promise((r) => setTimeout(r, 5));
    }
    await waitFor('the replica running', () => commands().length >= 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(commands().length, 'copies of the replica running').toBe(1);
    statuses = await executor.reconcile([job]);
    expect(statuses.map((s) => s.phase)).toEqual(['running']);
    await stopAndWait(executor);
  } finally {
    await executor.close();
    killAll([...spawned, ...commands()]);
  }
}, 120_000);

it('a start whose answer was lost and that spawned nothing is launched once the wait is over', async () => {
  const dataDir = dirs.temp();
  const job = jobOf(MARK);
  const real = new ReplicaLauncher();
  let calls = 0;
  const launcher = {
    launch: (...args: Parameters<ReplicaLauncher['launch']>) =>
      ++calls === 1 ? Promise.resolve('replica launcher ended: SIGKILL') : real.launch(...args),
    close: () => real.close(),
  };
  const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 2, launcher });
  try {
    const lostAt = performance.now();
    await executor.reconcile([job]);
    let statuses = await executor.reconcile([job]);
    expect(calls, 'not launched again at once').toBe(1);
    while (statuses[0]?.phase !== 'running' && performance.now() - lostAt < 20_000) {
      await new Promise((r) => setTimeout(r, 100));
      statuses = await executor.reconcile([job]);
    }
    expect(statuses.map((s) => s.phase)).toEqual(['running']);
    expect(performance.now() - lostAt).toBeGreaterThanOrEqual(LOST_START_WAIT_MS);
    expect(calls).toBe(2);
    await waitFor('its command running', () => commands().length === 1);
    await stopAndWait(executor);
  } finally {
    await executor.close();
    killAll(commands());
  }
}, 120_000);

it("an earlier start's record is not kept: boa killed before it records the new supervisor, its restart adopts it", async () => {
  const dataDir = dirs.temp();
  const dir = join(dataDir, 'jobs', '1', '1');
  const marker = join(dataDir, 'ran-once');
  // Exits 3 the first time (the lost start), then runs.
  const job = jobOf(['sh', '-c', `if [ -e "$0" ]; then exec ${MARK.join(' ')}; fi; : >"$0"; exit 3`, marker]);
  const spawned: number[] = [];
  const launcher = losingLauncher((n, pid) => {
    spawned.push(pid);
    return n === 1 ? 'failed' : 'hang';
  });
  const first = new LocalExecutor({ dataDir, terminationGraceSeconds: 2, launcher });
  let restarted: LocalExecutor | undefined;
  try {
    await first.reconcile([job]);
    // The lost start's supervisor recorded itself, its command ended, and it is gone.
    await waitFor(
      'the first supervisor gone',
      () => existsSync(join(dir, '0.exit')) && !processExists(spawned[0] ?? 0),
    );
    expect(readPid(dir, 0)?.pid).toBe(spawned[0]);
    // Started again; boa "killed" before it records the new supervisor (the launch never answers).
    void first.reconcile([job]);
    await waitFor('the replica running', () => commands().length === 1);
    await launcher.close();
    restarted = new LocalExecutor({ dataDir, terminationGraceSeconds: 2 });
    let statuses = await restarted.reconcile([job]);
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setTimeout(r, 50));
      statuses = await restarted.reconcile([job]);
    }
    expect(readPid(dir, 0)?.pid, 'the record names the running supervisor').toBe(spawned[1]);
    expect(statuses.map((s) => s.phase)).toEqual(['running']);
    expect(commands().length, 'copies of the replica running').toBe(1);
  } finally {
    if (restarted) await stopAll(restarted);
    await launcher.close();
    killAll([...spawned, ...commands()]);
  }
}, 120_000);
