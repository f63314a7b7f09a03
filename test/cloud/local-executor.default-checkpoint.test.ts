/**
 * A local job given no checkpoint location gets its own folder as BOA_CHECKPOINT_DIR, made before its
 * first process starts and the same in each generation (boa restarts a job's processes at every
 * rescale); one given --checkpoint keeps it.
 */
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { LocalExecutor } from '../../src/cloud/local/executor.ts';
import type { DesiredJob } from '../../src/service/ports.ts';
import { localExecutorDirs } from './local-executor-dirs.ts';
import { settle } from './local-executor-settle.ts';

const dirs = localExecutorDirs('boa-default-checkpoint-');
afterEach(() => dirs.cleanup());

// Says where it was told to checkpoint, fails if that is no folder yet, and counts its runs there.
const SCRIPT =
  'echo "dir=$BOA_CHECKPOINT_DIR"; test -d "$BOA_CHECKPOINT_DIR" && echo run >> "$BOA_CHECKPOINT_DIR/runs"';

const job = (
  jobId: number,
  generation: number,
  env: Record<string, string> = {},
  workloadEnv?: Record<string, string>,
): DesiredJob => ({
  jobId,
  generation,
  replicas: [
    {
      jobId,
      generation,
      rank: 0,
      node: 'local-1',
      gpus: 1,
      workload: { command: ['sh', '-c', SCRIPT], ...(workloadEnv && { env: workloadEnv }) },
      env,
    },
  ],
});

// Ended, however: what it wrote is then compared whole.
const ended =
  (jobId: number, generation: number) =>
  (s: readonly { jobId: number; generation: number; phase: string }[]) =>
    s.some((r) => r.jobId === jobId && r.generation === generation && r.phase !== 'running');

it('gives a job without --checkpoint its own folder, kept across its generations', async () => {
  const dataDir = dirs.temp();
  const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
  try {
    await settle(executor, [job(1, 1), job(2, 1)], (s) => ended(1, 1)(s) && ended(2, 1)(s));
    await settle(executor, [job(1, 2)], ended(1, 2));
  } finally {
    await executor.close();
  }
  const jobs = join(realpathSync(dataDir), 'jobs');
  const log = (jobId: number, g: number) =>
    readFileSync(join(jobs, String(jobId), String(g), '0.log'), 'utf8');
  expect(log(1, 1)).toBe(`dir=${join(jobs, '1', 'checkpoint')}\n`);
  expect(log(1, 2)).toBe(log(1, 1));
  expect(log(2, 1)).toBe(`dir=${join(jobs, '2', 'checkpoint')}\n`);
  // Both of job 1's runs wrote to the one folder; job 2's is its own.
  expect(readFileSync(join(jobs, '1', 'checkpoint', 'runs'), 'utf8')).toBe('run\nrun\n');
  expect(readFileSync(join(jobs, '2', 'checkpoint', 'runs'), 'utf8')).toBe('run\n');
});

it('leaves a checkpoint location the job was given as it is', async () => {
  const dataDir = dirs.temp();
  const given = dirs.temp();
  const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
  try {
    await settle(executor, [job(3, 1, { BOA_CHECKPOINT_DIR: given })], ended(3, 1));
  } finally {
    await executor.close();
  }
  const jobs = join(realpathSync(dataDir), 'jobs');
  expect(readFileSync(join(jobs, '3', '1', '0.log'), 'utf8')).toBe(`dir=${given}\n`);
  expect(readFileSync(join(given, 'runs'), 'utf8')).toBe('run\n');
  expect(existsSync(join(jobs, '3', 'checkpoint'))).toBe(false);
});

// A job's own `--env BOA_CHECKPOINT_DIR` was replaced by the default folder (found in review); before
// 2026-12-01 and on Kubernetes the job gets it.
it("honours a job's own --env BOA_CHECKPOINT_DIR, making no folder of its own", async () => {
  const dataDir = dirs.temp();
  const mine = dirs.temp();
  const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
  try {
    await settle(executor, [job(4, 1, {}, { BOA_CHECKPOINT_DIR: mine })], ended(4, 1));
  } finally {
    await executor.close();
  }
  const jobs = join(realpathSync(dataDir), 'jobs');
  expect(readFileSync(join(jobs, '4', '1', '0.log'), 'utf8')).toBe(`dir=${mine}\n`);
  expect(readFileSync(join(mine, 'runs'), 'utf8')).toBe('run\n');
  expect(existsSync(join(jobs, '4', 'checkpoint'))).toBe(false);
});
