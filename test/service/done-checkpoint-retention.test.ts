/**
 * The checkpoint folder the local executor made for a job given none is deleted once the job ended
 * done (retention.ts pruneDoneCheckpoints); a failed job's stays with its logs, for a resubmit.
 */
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { LocalExecutor } from '../../src/cloud/local/executor.ts';
import { pruneDoneCheckpoints } from '../../src/service/retention.ts';
import { killReplicaGroups } from '../helpers/replica-groups.ts';
import { startService } from './harness.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

it("deletes a done job's checkpoint folder, and keeps a failed job's and both jobs' logs", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'boa-done-checkpoint-'));
  const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
  const boa = await startService({
    executor,
    config: { local: { bootSeconds: 0, releaseSeconds: 0 }, maxRestarts: 0 },
  });
  cleanups.push(async () => {
    await boa.close();
    await executor.close();
    killReplicaGroups(join(dataDir, 'jobs'));
    rmSync(dataDir, { recursive: true, force: true });
  });
  await boa.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
  // Each writes a checkpoint, then ends with the exit code given.
  const submit = async (exitCode: number) =>
    (
      await boa.request('POST', '/v1/jobs', {
        class: 'cifar10',
        workload: {
          command: [
            process.execPath,
            '-e',
            `require('node:fs').writeFileSync(require('node:path').join(process.env.BOA_CHECKPOINT_DIR, 'state'), 'saved'); console.log('ran'); process.exit(${exitCode})`,
          ],
        },
      })
    ).body.id as number;
  const done = await submit(0);
  const failed = await submit(3);
  const ended = () => boa.service.job(done).state === 'done' && boa.service.job(failed).state === 'failed';
  for (let i = 0; i < 300 && !ended(); i++) {
    await boa.ticks(1);
    await boa.service.execution.settle();
    await new Promise((r) => setTimeout(r, 50));
  }
  expect(boa.service.job(done).state).toBe('done');
  expect(boa.service.job(failed).state).toBe('failed');
  const jobs = join(realpathSync(dataDir), 'jobs');
  const checkpoint = (id: number) => join(jobs, String(id), 'checkpoint', 'state');
  expect(readFileSync(checkpoint(done), 'utf8')).toBe('saved');
  // The executor lets go of the ended replicas within a pass or two (more on a loaded machine).
  for (let i = 0; i < 100 && pruneDoneCheckpoints(boa.service) === 0; i++) {
    await boa.ticks(1);
    await boa.service.execution.settle();
    await new Promise((r) => setTimeout(r, 20));
  }
  expect(existsSync(checkpoint(done))).toBe(false);
  expect(readFileSync(checkpoint(failed), 'utf8')).toBe('saved');
  expect(pruneDoneCheckpoints(boa.service)).toBe(0); // nothing left to delete
  for (const id of [done, failed]) {
    const logs = await boa.request('GET', `/v1/jobs/${id}/logs`);
    expect(logs.status).toBe(200);
  }
}, 60_000);
