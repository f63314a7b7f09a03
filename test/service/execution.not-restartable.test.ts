import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { localExecutorService } from './local-executor-service.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

describe("execution with the local executor: the job's own command exits 127", () => {
  it('fails the job after its one attempt, not restarted, saying why and what to check', async () => {
    const { s, executor, dataDir, untilFailed } = await localExecutorService(cleanups, {
      prefix: 'boa-notrestartable-',
      maxRestarts: 3,
    });
    // sh is found at submission; the program it runs is not there (a wrapper over a missing torchrun).
    const made = await s.request('POST', '/v1/jobs', {
      class: 'bert',
      workload: { command: ['sh', '-c', 'exec no-such-program-boa --nnodes=1'] },
    });
    expect(made.status).toBe(201);
    const job = s.service.job(made.body.id);
    await untilFailed(job);
    expect(job.state).toBe('failed');
    expect(job.restarts).toBe(0);
    // One attempt: its replicas ran in the first generation's folder only (beside it, the job's own
    // checkpoint folder, given no --checkpoint).
    expect(readdirSync(join(dataDir, 'jobs', String(job.id))).sort()).toEqual(['1', 'checkpoint']);
    expect(job.exitCode).toBe(127);
    expect(job.failureReason).toMatch(
      /^rank \d+ exited 127 \(command not found\? the job's output says which\); not restarted: exit 127 means a command the job ran was not found, which fails the same way at every start; check the command and the PATH on this machine/,
    );
    const shown = await s.request('GET', `/v1/jobs/${job.id}`);
    expect(shown.body).toMatchObject({ state: 'failed', restarts: 0, failedRank: expect.any(Number) });
    const log = await executor.logs({ jobId: job.id, rank: 0, tailLines: 5 });
    expect(log?.text).toMatch(/no-such-program-boa: not found/);
  });
});
