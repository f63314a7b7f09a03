import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalExecutor } from '../../src/cloud/local/executor.ts';
import { killReplicaGroups } from '../helpers/replica-groups.ts';
import { startCliService } from './cli-harness.ts';

/**
 * A CLI test's service running jobs as real local processes (nodes boot and go at once), with a budget
 * set; `cleanups` gets what stops it, kills what its jobs left and removes its data dir.
 */
export async function startProcessService(
  cleanups: Array<() => Promise<void>>,
  config: Record<string, unknown> = {},
  executorOptions: { followPollMs?: number } = {},
  hold?: (request: Request) => Promise<void>,
) {
  const dataDir = mkdtempSync(join(tmpdir(), 'boa-cli-jobs-'));
  const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1, ...executorOptions });
  const s = await startCliService(
    { executor, config: { local: { bootSeconds: 0, releaseSeconds: 0 }, ...config } },
    hold,
  );
  cleanups.push(async () => {
    await s.close();
    await executor.close();
    killReplicaGroups(join(dataDir, 'jobs'));
    rmSync(dataDir, { recursive: true, force: true });
  });
  await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
  return { s, dataDir };
}
