import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { localExecutorService } from './local-executor-service.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

describe('execution with the local executor: a working directory gone since submission', () => {
  it('counts each start as a failure (a restart, then failed) instead of holding the GPUs forever', async () => {
    const { s, executor, dataDir, untilFailed } = await localExecutorService(cleanups, {
      prefix: 'boa-spawnfail-',
      maxRestarts: 1,
    });
    const workDir = join(dataDir, 'work');
    mkdirSync(workDir);
    const made = await s.request('POST', '/v1/jobs', {
      class: 'bert',
      workload: { command: ['sleep', '30'], workingDir: workDir },
    });
    expect(made.status).toBe(201);
    // Removed after the submission was checked (a cleanup, a reboot's tmpfs).
    rmSync(workDir, { recursive: true, force: true });
    const job = s.service.job(made.body.id);
    await untilFailed(job);
    expect(job.state).toBe('failed');
    expect(job.restarts).toBe(1);
    expect(job.exitCode).toBe(126);
    expect(job.failureReason).toContain(`cannot enter the working directory ${workDir}`);
    const log = await executor.logs({ jobId: job.id, rank: 0, tailLines: 5 });
    expect(log?.text).toContain(`boa: cannot enter the working directory ${workDir}`);
  });
});
