import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalExecutor } from '../../src/cloud/local/executor.ts';
import type { ServiceJob } from '../../src/service/jobs.ts';
import { killReplicaGroups } from '../helpers/replica-groups.ts';
import { startService } from './harness.ts';

/**
 * The service running real processes through the local executor on a temp data dir, a budget of 30
 * set and planned; `cleanups` gets what ends it (the service, any replica left, the dir).
 */
export async function localExecutorService(
  cleanups: Array<() => Promise<void> | void>,
  { prefix, maxRestarts }: { prefix: string; maxRestarts: number },
) {
  const dataDir = mkdtempSync(join(tmpdir(), prefix));
  const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
  const s = await startService({
    executor,
    config: {
      priorRates: { cifar10: 8, bert: 1 },
      local: { maxNodes: 16, bootSeconds: 60, releaseSeconds: 30 },
      maxRestarts,
      restartBackoffSeconds: 1,
    },
  });
  cleanups.push(async () => {
    await s.close();
    killReplicaGroups(join(dataDir, 'jobs'));
    rmSync(dataDir, { recursive: true, force: true });
  });
  const budget = await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 30 });
  if (budget.status !== 200) throw new Error(`budget not set: ${budget.status}`);
  await s.service.planner.idle();
  /** Ticks until the job has failed: each a minute of the service's clock, past any backoff, while
   * the replicas' exits take real time. */
  const untilFailed = async (job: ServiceJob) => {
    for (let i = 0; i < 200 && job.state !== 'failed'; i++) {
      await s.ticks(1);
      await s.service.execution.settle();
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  return { s, executor, dataDir, untilFailed };
}
