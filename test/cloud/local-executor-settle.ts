import type { LocalExecutor } from '../../src/cloud/local/executor.ts';
import type { DesiredJob, ReplicaStatus } from '../../src/service/ports.ts';

/** Reconciles until `done` holds for the statuses, polling every 25 ms; throws after 20 s. */
export async function settle(
  executor: LocalExecutor,
  desired: DesiredJob[],
  done: (s: readonly ReplicaStatus[]) => boolean,
): Promise<readonly ReplicaStatus[]> {
  for (let i = 0; i < 800; i++) {
    const statuses = await executor.reconcile(desired);
    if (done(statuses)) return statuses;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('timed out');
}
