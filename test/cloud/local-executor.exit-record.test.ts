import { spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalExecutor } from '../../src/cloud/local/executor.ts';
import type { DesiredJob } from '../../src/service/ports.ts';
import { localExecutorDirs } from './local-executor-dirs.ts';

/**
 * A replica's exit record on a full disk: the supervisor must write it whole or not at all, and boa must
 * read one that is not a whole record as no record (interrupted, resumed), never as done or failed.
 */
const SUPERVISOR = resolve(import.meta.dirname, '../../src/cloud/local/replica-supervisor.sh');
const dirs = localExecutorDirs('boa-exit-record-');
afterEach(() => dirs.cleanup());

const job = (): DesiredJob => ({
  jobId: 1,
  generation: 1,
  replicas: [
    { jobId: 1, generation: 1, rank: 0, node: 'local-1', gpus: 1, workload: { command: ['true'] }, env: {} },
  ],
});

const present = (file: string) => {
  try {
    lstatSync(file);
    return true;
  } catch {
    return false;
  }
};

/** A pid that no process has (one that ran and was reaped). */
async function deadPid(): Promise<number> {
  const dead = spawn('true');
  await new Promise((r) => dead.on('exit', r));
  return dead.pid as number;
}

describe('local executor: an exit record that is not whole', () => {
  it.runIf(existsSync('/dev/full'))(
    'is never renamed into place by the supervisor (a full disk)',
    async () => {
      const dir = join(dirs.temp(), 'jobs/1/1');
      mkdirSync(dir, { recursive: true });
      // Its temporary record's writes fail with ENOSPC, as on a full disk.
      symlinkSync('/dev/full', join(dir, '0.exit.tmp'));
      const supervisor = spawn('/bin/sh', [SUPERVISOR, dir, '0', 'local-1', '1', '/', '--', 'true'], {
        stdio: 'ignore',
      });
      const code = await new Promise((r) => supervisor.on('exit', r));
      expect(code).toBe(0);
      expect(present(join(dir, '0.exit')), 'a record that failed to write was renamed in').toBe(false);
      expect(present(join(dir, '0.exit.tmp'))).toBe(false);
    },
  );

  it.each([
    ['that is empty', ''],
    ['cut short', '{"code":0,"signal":null,"reas'],
    ['of null', 'null'],
    ['without its time', '{"code":0,"signal":null}'],
    ['with a code that is not a number', '{"code":"0","signal":null,"at":1}'],
  ])('reads a record %s of a gone supervisor as interrupted, never done or failed', async (_, text) => {
    const dataDir = dirs.temp();
    const dir = join(dataDir, 'jobs/1/1');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, '0.pid'),
      JSON.stringify({ pid: await deadPid(), node: 'local-1', startedAt: 0 }),
    );
    writeFileSync(join(dir, '0.exit'), text);
    const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
    const [status] = await executor.reconcile([job()]);
    expect(status).toMatchObject({ phase: 'failed', interrupted: true });
    expect(status?.exitCode).toBeUndefined();
    await executor.close();
    // The cleanup signals recorded pids' groups: not this one, which may be reused by now.
    rmSync(join(dir, '0.pid'));
  });

  it('adopts a live supervisor with an empty record as running (its record not written yet)', async () => {
    const dataDir = dirs.temp();
    const dir = join(dataDir, 'jobs/1/1');
    mkdirSync(dir, { recursive: true });
    // A process whose command line is this replica's supervisor's.
    const supervisor = spawn('/bin/sh', ['-c', 'sleep 30', '/x/replica-supervisor.sh', dir, '0'], {
      detached: true,
      stdio: 'ignore',
    });
    dirs.track(supervisor.pid as number);
    writeFileSync(join(dir, '0.pid'), JSON.stringify({ pid: supervisor.pid, node: 'local-1', startedAt: 0 }));
    writeFileSync(join(dir, '0.exit'), '');
    await new Promise((r) => setTimeout(r, 200));
    const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
    const [status] = await executor.reconcile([job()]);
    expect(status?.phase).toBe('running');
    await executor.close();
  });
});
