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

/**
 * Ticks the service until job `id`'s log, read through the API as `boa jobs logs` reads it (`query`:
 * its rank and tail), is one `done` holds, for at most a minute (the test's expectations then say what
 * is there). A test then runs the CLI once on it: polling with the CLI started a process a look, one to
 * three seconds each on a loaded machine. The pause between looks keeps the ticks per second near what
 * they were then.
 */
export async function untilLog(
  s: Awaited<ReturnType<typeof startProcessService>>['s'],
  id: number,
  query: string,
  done: (text: string) => boolean,
): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const answer = await s.app.request(`/v1/jobs/${id}/logs?${query}`, {
      headers: { authorization: `Bearer ${s.token}` },
    });
    if ((answer.status === 200 && done(await answer.text())) || Date.now() > deadline) return;
    await s.ticks(1);
    await s.service.execution.settle();
    await new Promise((r) => setTimeout(r, 250));
  }
}
