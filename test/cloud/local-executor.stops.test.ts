/**
 * boa's own stops of local replicas (found in review): one stopped is never taken back, its grace is
 * counted on a steady clock, its SIGTERM is sent once across a restart, and one replica whose records
 * cannot be removed stops no other job's statuses.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { LocalExecutor } from '../../src/cloud/local/executor.ts';
import type { DesiredJob } from '../../src/service/ports.ts';
import { localExecutorDirs } from './local-executor-dirs.ts';
import { settle } from './local-executor-settle.ts';

const dirs = localExecutorDirs('boa-local-stops-');
afterEach(() => dirs.cleanup());
const temp = () => dirs.temp();

const job = (command: string[], jobId = 1, generation = 1): DesiredJob => ({
  jobId,
  generation,
  replicas: [{ jobId, generation, rank: 0, node: 'local-1', gpus: 1, workload: { command }, env: {} }],
});

/** Checkpoints on SIGTERM (a second's work, said in the log), then exits 0, as boa's clients do. */
const CHECKPOINTS = [
  'sh',
  '-c',
  'trap "sleep 1; echo checkpointed; exit 0" TERM; echo started; while :; do sleep 0.1; done',
];

/** The replica's log so far ('' before its supervisor made it). */
const logOf = (dataDir: string) => {
  const file = join(dataDir, 'jobs', '1', '1', '0.log');
  return existsSync(file) ? readFileSync(file, 'utf8') : '';
};

/** Waits up to 20 s (returns as soon as it holds: a replica's shell starts slowly on a loaded machine). */
async function until(condition: () => boolean) {
  for (let i = 0; i < 800 && !condition(); i++) await new Promise((r) => setTimeout(r, 25));
  expect(condition()).toBe(true);
}

it("a generation boa stopped and then wants again (a clock stepped back) ends as interrupted, never done: its SIGTERM's exit 0 is not the job's end", async () => {
  const dataDir = temp();
  const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 30 });
  try {
    const wanted = job(CHECKPOINTS);
    await settle(executor, [wanted], (s) => s[0]?.phase === 'running');
    await until(() => logOf(dataDir).includes('started'));
    expect((await executor.reconcile([]))[0]?.phase).toBe('stopping');
    const ended = await settle(
      executor,
      [wanted],
      (s) => s[0]?.phase === 'succeeded' || s[0]?.phase === 'failed',
    );
    expect(ended[0]).toMatchObject({ phase: 'failed', exitCode: 0, interrupted: true });
    expect(ended[0]?.reason).toMatch(/after boa's stop/);
    expect(logOf(dataDir)).toMatch(/checkpointed/);
  } finally {
    await executor.close();
  }
});

it('a generation wanted again while its stop runs still gets its SIGKILL at the grace: one that ignores SIGTERM is not left stopping', async () => {
  const dataDir = temp();
  const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
  try {
    const wanted = job(['sh', '-c', 'trap "" TERM; echo started; while :; do sleep 0.1; done']);
    await settle(executor, [wanted], (s) => s[0]?.phase === 'running');
    await until(() => logOf(dataDir).includes('started'));
    await executor.reconcile([]);
    const ended = await settle(executor, [wanted], (s) => s[0]?.phase === 'failed');
    expect(ended[0]).toMatchObject({ interrupted: true });
  } finally {
    await executor.close();
  }
});

it('counts the grace on a steady clock: a wall clock stepped 10 minutes forward does not SIGKILL a replica mid-checkpoint', async () => {
  const dataDir = temp();
  let step = 0;
  const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 30, now: () => Date.now() + step });
  try {
    const wanted = job(CHECKPOINTS);
    await settle(executor, [wanted], (s) => s[0]?.phase === 'running');
    await until(() => logOf(dataDir).includes('started'));
    expect((await executor.reconcile([]))[0]?.phase).toBe('stopping');
    step = 10 * 60_000;
    await settle(executor, [], (s) => s.length === 0);
    expect(logOf(dataDir)).toMatch(/checkpointed/);
  } finally {
    await executor.close();
  }
});

it('sends a recorded stop again at adoption only if it was not recorded as sent: a second SIGTERM cuts a save short', async () => {
  const dataDir = temp();
  const supervise = (generation: number, stop: object) => {
    const dir = join(dataDir, 'jobs/1', String(generation));
    mkdirSync(dir, { recursive: true });
    // A process that passes for the supervisor of replica <dir>/0 (its command line is one's).
    // It says when its trap is set: a SIGTERM before that ends the shell, nothing written.
    const script = `trap 'echo got >> ${dir}/term' TERM; : > ${dir}/ready; while :; do sleep 0.05; done`;
    const proc = spawn('/bin/sh', ['-c', script, '/x/replica-supervisor.sh', dir, '0'], {
      detached: true,
      stdio: 'ignore',
    });
    dirs.track(proc.pid as number);
    writeFileSync(join(dir, '0.pid'), JSON.stringify({ pid: proc.pid, node: 'local-1', startedAt: 0 }));
    writeFileSync(join(dir, '0.stop'), JSON.stringify(stop));
    return dir;
  };
  const sent = supervise(1, { at: Date.now(), sent: true });
  const unsent = supervise(2, { at: Date.now() });
  await until(() => existsSync(join(sent, 'ready')) && existsSync(join(unsent, 'ready')));
  const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 30 });
  try {
    await until(() => existsSync(join(unsent, 'term')));
    await new Promise((r) => setTimeout(r, 200));
    expect(existsSync(join(sent, 'term'))).toBe(false);
  } finally {
    await executor.close();
  }
});

it("one replica whose records cannot be removed stops no other job's statuses", async () => {
  const dataDir = temp();
  const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 5 });
  try {
    // Its .sigterm record made a folder: removing its records fails (as on a folder made read-only).
    const stuck = job(['sh', '-c', 'mkdir "$BOA_SIGTERM_FILE"; exit 0']);
    await settle(executor, [stuck], (s) => s[0]?.phase === 'succeeded');
    const other = job(['sh', '-c', 'exit 3'], 2);
    const statuses = await settle(executor, [other], (s) =>
      s.some((r) => r.jobId === 2 && r.phase === 'failed'),
    );
    expect(statuses.find((r) => r.jobId === 2)).toMatchObject({ exitCode: 3 });
  } finally {
    await executor.close();
  }
});
