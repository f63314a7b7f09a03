import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalExecutor } from '../../src/cloud/local/executor.ts';
import type { DesiredJob } from '../../src/service/ports.ts';
import { killReplicaGroups } from '../helpers/replica-groups.ts';
import { settle } from './local-executor-settle.ts';
import { pidFrom } from './pid-file.ts';

/**
 * torchrun starts each worker with Popen(start_new_session=True)
 * (torch/distributed/elastic/multiprocessing/subprocess_handler/subprocess_handler.py), so its workers
 * are in neither the supervisor's group nor the command's. Here `setsid sleep 300` stands for a worker.
 */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const job = (command: string[], generation = 1): DesiredJob => ({
  jobId: 1,
  generation,
  replicas: [{ jobId: 1, generation, rank: 0, node: 'local-1', gpus: 1, workload: { command }, env: {} }],
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ');
  } catch {
    return false;
  }
};

async function setUp() {
  const dataDir = mkdtempSync(join(tmpdir(), 'boa-escaped-'));
  const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
  const workerFile = join(dataDir, 'worker.pid');
  cleanups.push(async () => {
    await executor.close();
    killReplicaGroups(join(dataDir, 'jobs'));
    try {
      process.kill(Number(readFileSync(workerFile, 'utf8')), 'SIGKILL');
    } catch {
      // gone
    }
    rmSync(dataDir, { recursive: true, force: true });
  });
  return { executor, workerFile };
}

describe('local executor: a worker in a session of its own', () => {
  it('is killed when boa stops its replica and the agent must be SIGKILLed after the grace', async () => {
    const { executor, workerFile } = await setUp();
    // An agent that does not end on SIGTERM (hung in NCCL teardown), with one worker in its own session.
    const agent = job([
      'sh',
      '-c',
      `trap '' TERM; setsid sleep 300 & echo $! >"${workerFile}"; while :; do sleep 0.1; done`,
    ]);
    await settle(executor, [agent], (s) => s[0]?.phase === 'running');
    const worker = await pidFrom(workerFile);
    expect(alive(worker)).toBe(true);
    await settle(executor, [], (s) => s.length === 0);
    expect(alive(worker), `worker ${worker} (holding its GPU) outlived its stopped replica`).toBe(false);
  });

  it('is killed when its agent crashes on its own', async () => {
    const { executor, workerFile } = await setUp();
    const crashes = job(['sh', '-c', `setsid sleep 300 & echo $! >"${workerFile}"; sleep 0.5; exit 1`]);
    await settle(executor, [crashes], (s) => s[0]?.phase === 'running');
    const worker = await pidFrom(workerFile);
    const [failed] = await settle(executor, [crashes], (s) => s[0]?.phase === 'failed');
    expect(failed?.exitCode).toBe(1);
    // The generation is replaced: its successor would start beside a worker still holding the GPU.
    await settle(executor, [job(['sleep', '0'], 2)], (s) => s.every((r) => r.generation === 2));
    await new Promise((r) => setTimeout(r, 200));
    expect(alive(worker), `worker ${worker} outlived its failed replica`).toBe(false);
  });
});
