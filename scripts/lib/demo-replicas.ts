/**
 * The demo's replicas under the local executor (--executor local): what each runs, and waiting for
 * them on the replay's virtual clock, which cannot wait for real processes by itself.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { bootService } from '../../src/service/boot.ts';
import type { ReplicaStatus } from '../../src/service/ports.ts';
import { jobsWithFolders } from '../../src/cloud/job-folders.ts';

type Boa = Awaited<ReturnType<typeof bootService>>;

/** A replica that says what it was given, then waits to be stopped (SIGTERM at a rescale or the end). */
export const REPLICA_WORKLOAD = {
  command: [
    'sh',
    '-c',
    'echo "job $BOA_JOB_ID generation $BOA_GENERATION rank $NODE_RANK/$NNODES: WORLD_SIZE=$WORLD_SIZE ' +
      'NPROC_PER_NODE=$NPROC_PER_NODE"; exec sleep 1000000',
  ],
};

export async function replicasSettled(boa: Boa): Promise<void> {
  const { execution } = boa.service;
  await execution.settle();
  for (let i = 0; i < 100 && execution.settling; i++) {
    await sleep(10);
    execution.reconcile();
    await execution.settle();
  }
}

/**
 * The ticks the service takes early, at once, when a stopping replica ends while a job waits for its
 * GPUs (scheduler.tickWanted, wired so in main.ts: within a second there, not at the next tick). The
 * replay's virtual clock cannot run them by itself, so they are run here at the tick's time, each
 * followed by its replicas, at most a few a tick: without them a job placement held back for a
 * replica's GPUs waited a whole virtual tick for a stop that took well under a second.
 */
export async function earlyTicks(boa: Boa, wanted: { now: boolean }): Promise<number> {
  let ticks = 0;
  for (; ticks < 4 && wanted.now; ticks++) {
    wanted.now = false;
    await boa.scheduler.tick();
    await boa.service.planner.idle();
    await boa.scheduler.settle();
    await replicasSettled(boa);
    await boa.scheduler.settle();
  }
  return ticks;
}

/**
 * Asks the executor for no replicas until none is left (at most about 30 s); returns those left, each
 * as "job/generation/rank phase", so a run that leaves one says which.
 */
export async function stopReplicas(boa: Boa): Promise<string[]> {
  const executor = boa.service.execution.executor;
  let left: readonly ReplicaStatus[] = [];
  for (let i = 0; i < 300; i++) {
    left = (await executor?.reconcile([])) ?? [];
    if (left.length === 0) break;
    await sleep(100);
  }
  return left.map((r) => `${r.jobId}/${r.generation}/${r.rank} ${r.phase}`);
}

/**
 * Once every job is done: waits until the executor has stopped all replicas, and counts what it ran
 * (one log per replica started, DATA_DIR/jobs/<id>/<generation>/<rank>.log).
 */
export async function replicasRun(boa: Boa, stateDir: string) {
  const left = await stopReplicas(boa);
  let started = 0;
  let generations = 0;
  const jobsDir = join(stateDir, 'jobs');
  // Job folders only: jobs/ also holds the highest job id handed out (.highest-id).
  for (const job of jobsWithFolders(jobsDir)) {
    for (const generation of readdirSync(join(jobsDir, String(job)))) {
      generations += 1;
      started += readdirSync(join(jobsDir, String(job), generation)).filter((f) => f.endsWith('.log')).length;
    }
  }
  return {
    kind: 'local',
    replicasStarted: started,
    generationsRun: generations,
    replicasLeft: left.length,
    ...(left.length > 0 ? { left } : {}),
  };
}
