import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { LocalExecutor } from '../../src/cloud/local/executor.ts';
import { readPid } from '../../src/cloud/local/executor-records.ts';
import { ReplicaLauncher } from '../../src/cloud/local/launcher.ts';
import { processExists } from '../../src/cloud/local/replica-processes.ts';
import { SPAWN_ATTEMPTS } from '../../src/cloud/local/spawn-failures.ts';
import type { DesiredJob } from '../../src/service/ports.ts';
import { commandMark } from './command-mark.ts';
import { commandPids, waitFor } from './local-commands.ts';
import { localExecutorDirs } from './local-executor-dirs.ts';

/**
 * A supervisor held up (a machine overloaded) past the wait for the record of a start whose answer was
 * lost, so the replica was launched again: two supervisors for one replica. The one the record names runs
 * it; the other ends at once, running nothing. Before, both ran the job's command (documented as a hole).
 */
const dirs = localExecutorDirs('boa-latesup-');
afterEach(() => dirs.cleanup());

const MARK = commandMark(3121);
const commands = () => commandPids(MARK);
const SUPERVISOR = resolve(import.meta.dirname, '../../src/cloud/local/replica-supervisor.sh');

const job: DesiredJob = {
  jobId: 1,
  generation: 1,
  replicas: [
    { jobId: 1, generation: 1, rank: 0, node: 'local-1', gpus: 1, workload: { command: MARK }, env: {} },
  ],
};

/** The lost start's supervisor, started late: as the launcher spawned it, detached. */
function lateSupervisor(dir: string, command = MARK): { pid: number; ended: Promise<void> } {
  const child = spawn('/bin/sh', [SUPERVISOR, dir, '0', 'local-1', '1', '/', '--', ...command], {
    detached: true,
    stdio: 'ignore',
  });
  dirs.track(child.pid!);
  const ended = new Promise<void>((done) => child.on('exit', () => done()));
  return { pid: child.pid!, ended };
}

/** What a failed test left running: replicas outlive their executor. */
function killCommands(): void {
  for (const pid of commands()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

async function stopAll(executor: LocalExecutor): Promise<void> {
  for (let i = 0; i < 200 && (await executor.reconcile([])).length > 0; i++)
    await new Promise((r) => setTimeout(r, 25));
  await executor.close();
}

it('starting after the replica was launched again, it ends running nothing; the launched one runs on', async () => {
  const dataDir = dirs.temp();
  const dir = join(dataDir, 'jobs', '1', '1');
  const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
  try {
    expect((await executor.reconcile([job])).map((s) => s.phase)).toEqual(['running']);
    await waitFor('the replica running', () => commands().length === 1);
    const running = readPid(dir, 0)!.pid;
    const late = lateSupervisor(dir);
    await late.ended;
    expect(commands().length, 'copies of the replica running').toBe(1);
    expect(readPid(dir, 0)?.pid, 'the record still names the launched one').toBe(running);
    expect(readFileSync(join(dir, '0.log'), 'utf8')).toContain(
      `boa: replica already run by supervisor ${running}: this start (pid ${late.pid}) ends, running nothing`,
    );
    expect((await executor.reconcile([job])).map((s) => s.phase)).toEqual(['running']);
    await stopAll(executor);
    await waitFor('the replica stopped', () => commands().length === 0);
  } finally {
    await executor.close();
    killCommands();
  }
}, 120_000);

it('claiming the replica between its launch and boa writing the record, it is tracked; the launched one ends', async () => {
  const dataDir = dirs.temp();
  const dir = join(dataDir, 'jobs', '1', '1');
  const real = new ReplicaLauncher();
  let late: { pid: number } | undefined;
  let launchedPid: number | undefined;
  // The late supervisor records itself and runs the command just before the launch's own supervisor starts.
  const launcher = {
    async launch(...args: Parameters<ReplicaLauncher['launch']>) {
      late = lateSupervisor(dir);
      await waitFor('the late supervisor running the command', () => commands().length === 1);
      const launched = await real.launch(...args);
      if (typeof launched !== 'string') launchedPid = launched.pid;
      return launched;
    },
    close: () => real.close(),
  };
  const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1, launcher });
  try {
    let statuses = await executor.reconcile([job]);
    await waitFor('the launched supervisor gone', () => !processExists(launchedPid ?? 0));
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setTimeout(r, 50));
      statuses = await executor.reconcile([job]);
    }
    expect(statuses.map((s) => s.phase)).toEqual(['running']);
    expect(commands().length, 'copies of the replica running').toBe(1);
    expect(readPid(dir, 0)?.pid, 'the record names the late one').toBe(late?.pid);
    // Tracked: boa's stop reaches it.
    await stopAll(executor);
    await waitFor('the replica stopped', () => commands().length === 0);
  } finally {
    await executor.close();
    killCommands();
  }
}, 120_000);

it.each([
  ['given up on (its last attempt lost)', SPAWN_ATTEMPTS, [job]],
  ['of a job no longer wanted (its first attempt lost, then stopped)', 1, []],
] as const)(
  'a lost start %s whose supervisor starts late runs nothing',
  async (_, lostAttempt, after) => {
    const dataDir = dirs.temp();
    const dir = join(dataDir, 'jobs', '1', '1');
    const ran = join(dataDir, 'ran');
    let calls = 0;
    // Attempts before the lost one fail outright; the lost one's supervisor has not started yet.
    const launcher = {
      launch: async () => (++calls === lostAttempt ? 'replica launcher ended: SIGKILL' : 'spawn EAGAIN'),
      close: async () => undefined,
    };
    const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1, launcher });
    try {
      await waitFor('the lost attempt', async () => {
        await executor.reconcile([job]);
        return calls >= lostAttempt;
      });
      // The service moves on (the replica reported failed, or the job stopped); passes go on.
      for (let i = 0; i < 3; i++) await executor.reconcile([...after]);
      const late = lateSupervisor(dir, ['sh', '-c', `: >"$0"; exec ${MARK.join(' ')}`, ran]);
      await late.ended;
      expect(existsSync(ran), 'the command ran').toBe(false);
      expect(commands()).toEqual([]);
      expect(readFileSync(join(dir, '0.log'), 'utf8')).toContain(
        `this start was given up on (its answer lost, the replica failed or no longer wanted): pid ${late.pid} ends, running nothing`,
      );
      expect(calls, 'not launched again').toBe(lostAttempt);
    } finally {
      await executor.close();
      killCommands();
    }
  },
  120_000,
);
