import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalExecutor } from '../../src/cloud/local/executor.ts';
import { killReplicaGroups } from './replica-groups.ts';
import { expect } from 'vitest';

/** What this set-up needs of a started service (test/service/harness.ts's, or the CLI's over it). */
interface Started {
  close(): Promise<void>;
  request(method: string, path: string, body?: unknown): Promise<{ status: number }>;
  service: { planner: { idle(): Promise<void> } };
}

/**
 * A service on one local node (so a second job can only go where the first one's replica runs), its
 * replicas real processes under a fresh data dir, with a budget of 30 GPU-hours an hour and its plan
 * made. `start` is startService or startCliService. Its cleanup, pushed on `cleanups`, closes it, kills
 * what its replicas left and removes the data dir.
 */
export async function oneNodeLocalService<S extends Started>(
  start: (options: { executor: LocalExecutor; config: Record<string, unknown> }) => Promise<S>,
  options: { graceSeconds: number; prefix: string; cleanups: Array<() => Promise<void> | void> },
): Promise<{ s: S; dataDir: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), options.prefix));
  const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: options.graceSeconds });
  const s = await start({
    executor,
    config: {
      priorRates: { cifar10: 8, bert: 1 },
      local: { maxNodes: 1, bootSeconds: 0, releaseSeconds: 0 },
      terminationGraceSeconds: options.graceSeconds,
    },
  });
  options.cleanups.push(async () => {
    await s.close();
    killReplicaGroups(join(dataDir, 'jobs'));
    rmSync(dataDir, { recursive: true, force: true });
  });
  expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 30 })).status).toBe(200);
  await s.service.planner.idle();
  return { s, dataDir };
}
