import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { LocalExecutor } from '../../src/cloud/local/executor.ts';
import { ReplicaLauncher } from '../../src/cloud/local/launcher.ts';
import { processExists } from '../../src/cloud/local/replica-processes.ts';
import { SPAWN_ATTEMPTS } from '../../src/cloud/local/spawn-failures.ts';
import type { DesiredJob } from '../../src/service/ports.ts';
import { commandMark } from './command-mark.ts';
import { commandPids, waitFor } from './local-commands.ts';
import { localExecutorDirs } from './local-executor-dirs.ts';

/**
 * A lost start (the launcher ended with it pending) whose supervisor did spawn, when nothing will adopt
 * it: the replica's last allowed attempt (reported failed), or a job no longer desired (stopped, or a
 * new generation) while its wait for the pid record was pending. Its supervisor must not run on untracked.
 */
const dirs = localExecutorDirs('boa-loststray-');
afterEach(() => dirs.cleanup());

const MARK = commandMark(3117);
/** The pids running the job's command. */
const commands = () => commandPids(MARK);

const jobOf = (generation: number, command = MARK): DesiredJob => ({
  jobId: 1,
  generation,
  replicas: [{ jobId: 1, generation, rank: 0, node: 'local-1', gpus: 1, workload: { command }, env: {} }],
});
/** Ignores SIGTERM: only the SIGKILL after the grace ends it. */
const DEAF = ['sh', '-c', `trap '' TERM; exec ${MARK.join(' ')}`];

/**
 * A real launcher whose launches `lost` names spawn the supervisor, wait for its command to run (the
 * replica really started), then answer as a launcher that ended with them pending. Launches `refused`
 * names fail without spawning anything.
 */
function losingLauncher(lost: (n: number) => boolean, refused: (n: number) => boolean = () => false) {
  const real = new ReplicaLauncher();
  const spawned: number[] = [];
  let n = 0;
  const launcher = {
    async launch(...args: Parameters<ReplicaLauncher['launch']>) {
      const call = ++n;
      if (refused(call)) return 'spawn EAGAIN';
      const launched = await real.launch(...args);
      if (typeof launched === 'string' || !lost(call)) return launched;
      spawned.push(launched.pid);
      await waitFor('the lost start running its command', () => commands().length > 0);
      return 'replica launcher ended: SIGKILL';
    },
    close: () => real.close(),
    calls: () => n,
  };
  return { launcher, spawned };
}

function killAll(pids: readonly number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

it('the last attempt lost, its supervisor spawned: stopped, the replica stays failed', async () => {
  const dataDir = dirs.temp();
  // Every attempt but the last fails without a process; the last spawns one and its answer is lost.
  const { launcher, spawned } = losingLauncher(
    (n) => n === SPAWN_ATTEMPTS,
    (n) => n < SPAWN_ATTEMPTS,
  );
  const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1, launcher });
  const job = jobOf(1);
  try {
    let statuses = await executor.reconcile([job]);
    await waitFor('the replica given up on', async () => {
      statuses = await executor.reconcile([job]);
      return statuses[0]?.phase === 'failed';
    });
    expect(statuses[0]?.reason).toMatch(`could not be started (${SPAWN_ATTEMPTS} attempts)`);
    expect(spawned.length, 'the last attempt spawned a supervisor').toBe(1);
    // Its generation still desired (the service has not moved on yet): reported failed, its supervisor
    // and command stopped, nothing started again.
    await waitFor('the lost supervisor and its command gone', async () => {
      statuses = await executor.reconcile([job]);
      return !processExists(spawned[0]!) && commands().length === 0;
    });
    statuses = await executor.reconcile([job]);
    expect(statuses.map((s) => s.phase)).toEqual(['failed']);
    expect(launcher.calls()).toBe(SPAWN_ATTEMPTS);
    // Left, a restart would adopt its record as a replica of the generation.
    expect(existsSync(join(dataDir, 'jobs', '1', '1', '0.pid')), 'its pid record').toBe(false);
  } finally {
    await executor.close();
    killAll([...spawned, ...commands()]);
  }
}, 120_000);

it("a job stopped while a lost start's wait is pending: its supervisor is stopped", async () => {
  const dataDir = dirs.temp();
  const { launcher, spawned } = losingLauncher((n) => n === 1);
  const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1, launcher });
  try {
    await executor.reconcile([jobOf(1)]);
    expect(spawned.length).toBe(1);
    await waitFor('the lost supervisor and its command gone', async () => {
      await executor.reconcile([]);
      return !processExists(spawned[0]!) && commands().length === 0;
    });
    expect(launcher.calls()).toBe(1);
  } finally {
    await executor.close();
    killAll([...spawned, ...commands()]);
  }
}, 120_000);

it('a lost supervisor whose command ignores SIGTERM: SIGKILLed once the grace is over', async () => {
  const dataDir = dirs.temp();
  const { launcher, spawned } = losingLauncher((n) => n === 1);
  const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1, launcher });
  try {
    await executor.reconcile([jobOf(1, DEAF)]);
    const stoppedAt = performance.now();
    await waitFor('the lost supervisor and its command gone', async () => {
      await executor.reconcile([]);
      return !processExists(spawned[0]!) && commands().length === 0;
    });
    expect(performance.now() - stoppedAt, 'not before the grace').toBeGreaterThanOrEqual(1000);
  } finally {
    await executor.close();
    killAll([...spawned, ...commands()]);
  }
}, 120_000);

it("a new generation while a lost start's wait is pending: the old supervisor stopped first, one copy runs", async () => {
  const dataDir = dirs.temp();
  const { launcher, spawned } = losingLauncher((n) => n === 1);
  const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1, launcher });
  try {
    await executor.reconcile([jobOf(1)]);
    expect(spawned.length).toBe(1);
    let statuses = await executor.reconcile([jobOf(2)]);
    await waitFor('generation 2 running alone', async () => {
      statuses = await executor.reconcile([jobOf(2)]);
      return statuses[0]?.phase === 'running' && !processExists(spawned[0]!);
    });
    await waitFor('one copy of the command', () => commands().length === 1);
    expect(statuses.map((s) => [s.generation, s.phase])).toEqual([[2, 'running']]);
    for (let i = 0; i < 400 && (await executor.reconcile([])).length > 0; i++)
      await new Promise((r) => setTimeout(r, 25));
    await waitFor('the replica stopped', () => commands().length === 0);
  } finally {
    await executor.close();
    killAll([...spawned, ...commands()]);
  }
}, 120_000);
