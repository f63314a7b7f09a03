import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalExecutor } from '../../src/cloud/local/executor.ts';
import { killReplicaGroups } from '../helpers/replica-groups.ts';
import { startService } from './harness.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

describe('execution with the local executor: a working directory gone since submission', () => {
  it('counts each start as a failure (a restart, then failed) instead of holding the GPUs forever', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'boa-spawnfail-'));
    const workDir = join(dataDir, 'work');
    mkdirSync(workDir);
    const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
    const s = await startService({
      executor,
      config: {
        priorRates: { cifar10: 8, bert: 1 },
        local: { maxNodes: 16, bootSeconds: 60, releaseSeconds: 30 },
        maxRestarts: 1,
        restartBackoffSeconds: 1,
      },
    });
    cleanups.push(async () => {
      await s.close();
      killReplicaGroups(join(dataDir, 'jobs'));
      rmSync(dataDir, { recursive: true, force: true });
    });
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 30 })).status).toBe(200);
    await s.service.planner.idle();
    const made = await s.request('POST', '/v1/jobs', {
      class: 'bert',
      workload: { command: ['sleep', '30'], workingDir: workDir },
    });
    expect(made.status).toBe(201);
    // Removed after the submission was checked (a cleanup, a reboot's tmpfs).
    rmSync(workDir, { recursive: true, force: true });
    const job = s.service.job(made.body.id);
    // Each tick is a minute of the service's clock, past the backoff; the replicas' exits take real time.
    for (let i = 0; i < 200 && job.state !== 'failed'; i++) {
      await s.ticks(1);
      await s.service.execution.settle();
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(job.state).toBe('failed');
    expect(job.restarts).toBe(1);
    expect(job.exitCode).toBe(126);
    expect(job.failureReason).toContain(`cannot enter the working directory ${workDir}`);
    const log = await executor.logs({ jobId: job.id, rank: 0, tailLines: 5 });
    expect(log?.text).toContain(`boa: cannot enter the working directory ${workDir}`);
  });
});
