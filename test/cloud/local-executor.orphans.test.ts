import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalExecutor } from '../../src/cloud/local/executor.ts';
import type { DesiredJob, ReplicaStatus } from '../../src/service/ports.ts';
import { groupMembers, killReplicaGroups } from '../helpers/replica-groups.ts';

/**
 * A replica's command is more than its main process: a shell's background helpers, python's
 * multiprocessing workers. None of them may outlive the replica's generation (they hold GPUs).
 */
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function setUp(terminationGraceSeconds: number) {
  const dataDir = mkdtempSync(join(tmpdir(), 'boa-orphan-'));
  const executor = new LocalExecutor({ dataDir, terminationGraceSeconds });
  cleanups.push(async () => {
    await executor.close();
    killReplicaGroups(join(dataDir, 'jobs'));
    rmSync(dataDir, { recursive: true, force: true });
  });
  return { dataDir, executor };
}

const job = (command: string[], generation = 1): DesiredJob => ({
  jobId: 1,
  generation,
  replicas: [{ jobId: 1, generation, rank: 0, node: 'local-1', gpus: 1, workload: { command }, env: {} }],
});

async function settle(
  executor: LocalExecutor,
  desired: DesiredJob[],
  done: (s: readonly ReplicaStatus[]) => boolean,
) {
  for (let i = 0; i < 400; i++) {
    const statuses = await executor.reconcile(desired);
    if (done(statuses)) return statuses;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('timed out');
}

function killGroup(group: number) {
  try {
    process.kill(-group, 'SIGKILL');
  } catch {
    // gone
  }
}

function recordedGroup(dataDir: string): number | undefined {
  try {
    return Number(readFileSync(join(dataDir, 'jobs/1/1/0.group'), 'utf8'));
  } catch {
    return undefined; // not written yet
  }
}

/** The command's process group, once its main process and the helper it starts both run (20 s at most). */
async function commandGroup(dataDir: string): Promise<number> {
  for (let i = 0; i < 1000; i++) {
    const group = recordedGroup(dataDir);
    if (group !== undefined && groupMembers(group).length >= 2) {
      // Its record goes with the replica's, out of killReplicaGroups' sight: a group left behind ends here.
      cleanups.push(async () => killGroup(group));
      return group;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('the command and its helper never both ran');
}

describe('local executor: nothing of a replica outlives it', () => {
  it('kills the helpers of a command whose main process exited on its own', async () => {
    const { dataDir, executor } = await setUp(30);
    const crashes = job(['sh', '-c', 'sleep 300 & sleep 0.5; exit 3']);
    await settle(executor, [crashes], (s) => s[0]?.phase === 'running');
    const group = await commandGroup(dataDir);
    const [failed] = await settle(executor, [crashes], (s) => s[0]?.phase === 'failed');
    expect(failed?.exitCode).toBe(3);
    // Already when the exit is seen, before the failed generation is replaced.
    expect(groupMembers(group), 'a process of the replica is still running').toEqual([]);
    await settle(executor, [job(['sleep', '0'], 2)], (s) => s.every((r) => r.generation === 2));
  });

  it('stops the whole group of a replica boa stops (rescale, cancel), not only its main process', async () => {
    const { dataDir, executor } = await setUp(30);
    // The SIGTERM goes to the shell, which dies of it; then to the sleep it left, which has no parent.
    await settle(executor, [job(['sh', '-c', 'sleep 300 & wait'])], (s) => s[0]?.phase === 'running');
    const group = await commandGroup(dataDir);
    const started = Date.now();
    await settle(executor, [], (s) => s.length === 0);
    expect(groupMembers(group), 'a process of the replica is still running').toEqual([]);
    // The helper ended by the SIGTERM: nothing waited for the 30 s grace period.
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("gives the rest of a stopped command's group its grace period to finish", async () => {
    const { dataDir, executor } = await setUp(30);
    const marker = join(dataDir, 'checkpointed');
    const ready = join(dataDir, 'trapping');
    const helper = join(dataDir, 'helper.sh');
    // A worker that checkpoints on SIGTERM for a second; its parent shell dies of the SIGTERM at once,
    // and the worker, left without it, gets one then.
    writeFileSync(
      helper,
      `trap 'sleep 1; echo done >"${marker}"; exit 0' TERM\necho >"${ready}"\nwhile :; do sleep 0.1; done\n`,
    );
    await settle(executor, [job(['sh', '-c', 'sh "$0" & wait', helper])], (s) => s[0]?.phase === 'running');
    const group = await commandGroup(dataDir);
    // Its trap is set before the stop (on a loaded machine the SIGTERM could come first and end it).
    for (let i = 0; i < 2000 && !existsSync(ready); i++) await new Promise((r) => setTimeout(r, 10));
    expect(existsSync(ready)).toBe(true);
    await settle(executor, [], (s) => s.length === 0);
    expect(readFileSync(marker, 'utf8')).toBe('done\n');
    expect(groupMembers(group)).toEqual([]);
  });
});
