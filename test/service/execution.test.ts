/**
 * The job lifecycle around the executor (src/service/execution.ts), in process with a virtual clock:
 * the replicas asked for and their environment, what exits mean (done, restart with backoff, failed),
 * and the lease of self-launched jobs (lost, GPUs freed).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { DesiredJob, Executor, ReplicaStatus } from '../../src/service/ports.ts';
import { ManualClock, startService } from './harness.ts';
import { failOnce } from '../helpers/fail-once.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

/** An executor that runs nothing: it reports each desired replica running, or as the test ended it. */
class ScriptedExecutor implements Executor {
  readonly kind = 'local' as const;
  readonly calls: DesiredJob[][] = [];
  /** Exit codes the test gave replicas, by "job/generation/rank". */
  readonly exits = new Map<string, number>();
  /** Replicas stopped from outside (they exited 0 on a SIGTERM nobody in boa sent), with how long they ran. */
  readonly interrupted = new Map<string, number>();
  /** Any other status the test gives a replica. */
  readonly statuses = new Map<string, Partial<ReplicaStatus>>();
  /** Jobs whose replicas all stay starting, with this reason (a pod that never starts). */
  readonly starting = new Map<number, string>();
  /** Statuses of replicas no longer desired, reported at the next reconcile only. */
  readonly endedBefore: ReplicaStatus[] = [];

  /** When each job/generation was first asked for, by the service's clock (set by the test). */
  readonly asked = new Map<string, number>();
  now: () => number = () => 0;

  /** While set, every reconcile fails (the executor or its API server down). */
  down = false;
  /** While set, the jobs in `unmade` could not be made for no fault of theirs (the API server refusing the creates). */
  writesFailing = false;

  outage(): ReadonlySet<number> {
    return this.writesFailing ? new Set(this.unmade) : new Set();
  }

  async reconcile(desired: readonly DesiredJob[]): Promise<readonly ReplicaStatus[]> {
    if (this.down) throw new Error('the API server is down');
    this.calls.push([...desired]);
    for (const job of desired)
      if (!this.asked.has(`${job.jobId}/${job.generation}`))
        this.asked.set(`${job.jobId}/${job.generation}`, this.now());
    return this.endedBefore.splice(0).concat(this.desiredStatuses(desired));
  }

  /** Jobs none of whose replicas is ever made (every create refused as a step error). */
  readonly unmade = new Set<number>();

  private desiredStatuses(desired: readonly DesiredJob[]): ReplicaStatus[] {
    return desired
      .filter((job) => !this.unmade.has(job.jobId))
      .flatMap((job) =>
        job.replicas.map((r): ReplicaStatus => {
          const key = `${r.jobId}/${r.generation}/${r.rank}`;
          const code = this.exits.get(key);
          const base = { jobId: r.jobId, generation: r.generation, rank: r.rank, node: r.node };
          const given = this.statuses.get(key);
          if (given) return { ...base, phase: 'running', ...given };
          const stuck = this.starting.get(r.jobId);
          if (stuck !== undefined) return { ...base, phase: 'starting', reason: stuck };
          const ranForMs = this.interrupted.get(key);
          if (ranForMs !== undefined) {
            return {
              ...base,
              phase: 'failed',
              exitCode: 0,
              reason: 'exited 0 after SIGTERM',
              interrupted: true,
              ranForMs,
            };
          }
          if (code === undefined) return { ...base, phase: 'running' };
          return {
            ...base,
            phase: code === 0 ? 'succeeded' : 'failed',
            exitCode: code,
            reason: `exited ${code}`,
          };
        }),
      );
  }

  checkWorkload() {
    return undefined;
  }

  async close(): Promise<void> {}

  last(jobId: number): DesiredJob | undefined {
    return this.calls.at(-1)?.find((j) => j.jobId === jobId);
  }
}

/** A running bert job moved to a new generation (as a rescale does) before its old replicas' exits are seen. */
async function movedOn() {
  const s = await service();
  const { id } = (await s.request('POST', '/v1/jobs', { class: 'bert', workload })).body;
  await s.ticks(4);
  const job = s.service.job(id);
  const old = { jobId: id, generation: job.generation, node: job.allocation[0]!, exitCode: 0 };
  job.generation += 1;
  job.generationSince = s.clock.now();
  return { s, id, job, old };
}

async function service(
  config: Record<string, unknown> = {},
  store: { dataDir?: string; clock?: ManualClock } = {},
) {
  const executor = new ScriptedExecutor();
  const s = await startService({
    executor,
    ...store,
    config: {
      priorRates: { cifar10: 8, bert: 1 },
      local: { maxNodes: 16, bootSeconds: 60, releaseSeconds: 30 },
      publicUrl: 'http://boa.test:8080',
      ...config,
    },
  });
  cleanups.push(s.close);
  expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 30 })).status).toBe(200);
  await s.service.planner.idle();
  /** Ticks, then lets the executor's reconcile (run after each tick, never inside it) finish. */
  const ticks = async (count: number) => {
    for (let i = 0; i < count; i++) {
      await s.ticks(1);
      await s.service.execution.settle();
    }
  };
  return { ...s, executor, ticks };
}

const workload = { command: ['python', 'train.py'], env: { EPOCHS: '90' }, checkpoint: { uri: '/ckpt/r18' } };

describe('execution', () => {
  it('asks for one replica per node with the torchrun environment and a token that is the job token', async () => {
    const s = await service();
    const made = await s.request('POST', '/v1/jobs', { class: 'bert', workload });
    expect(made.status).toBe(201);
    await s.ticks(4);
    const job = s.service.job(made.body.id);
    expect(job.width).toBeGreaterThan(0);
    const desired = s.executor.last(job.id);
    expect(desired?.generation).toBe(job.generation);
    const nodes = new Set(job.allocation);
    expect(desired?.replicas).toHaveLength(nodes.size);
    const rank0 = desired?.replicas[0];
    expect(rank0?.env).toMatchObject({
      BOA_URL: 'http://boa.test:8080',
      BOA_JOB_ID: String(job.id),
      BOA_GENERATION: String(job.generation),
      WORLD_SIZE: String(job.width),
      NNODES: String(nodes.size),
      NODE_RANK: '0',
      MASTER_ADDR: rank0?.node,
      MASTER_PORT: '29500',
      BOA_CHECKPOINT_DIR: '/ckpt/r18',
    });
    expect(desired?.replicas.reduce((n, r) => n + Number(r.env.NPROC_PER_NODE), 0)).toBe(job.width);
    // Each node's first global rank follows the GPUs of the nodes before it (they can differ: 3 + 1).
    let first = 0;
    for (const replica of desired?.replicas ?? []) {
      expect(replica.env.BOA_FIRST_RANK).toBe(String(first));
      first += Number(replica.env.NPROC_PER_NODE);
    }
    // The replicas' token is the job token the submission printed.
    expect(rank0?.env.BOA_JOB_TOKEN).toBe(made.body.token);
    const own = await s.request('GET', `/v1/jobs/${job.id}/allocation`, undefined, rank0?.env.BOA_JOB_TOKEN);
    expect(own.status).toBe(200);
    // Neither the token nor its key is in the stored row.
    expect(JSON.stringify(s.repo.getJob(job.id))).not.toContain(made.body.token);
  });

  it('fails a generation not all running startTimeoutSeconds after it was asked for, with what its replica said, and restarts it', async () => {
    const s = await service({ startTimeoutSeconds: 300 });
    const { id } = (await s.request('POST', '/v1/jobs', { class: 'bert', workload })).body;
    const reason = 'ContainerCreating: Multi-Attach error for volume "pvc-1"';
    s.executor.starting.set(id, reason);
    s.executor.now = () => s.clock.now();
    await s.ticks(4);
    const first = { ...s.service.job(id) };
    expect(first).toMatchObject({ state: 'running', restarts: 0 });
    const askedAt = s.executor.asked.get(`${id}/${first.generation}`)!;
    // Within the deadline nothing happens; past it, the generation has failed (a restart, backed off).
    let failedAt = 0;
    while (s.service.job(id).restarts === 0 && s.clock.now() - askedAt < 600_000) {
      failedAt = s.clock.now();
      await s.ticks(1);
    }
    const failed = s.service.job(id);
    expect(failed.restarts).toBe(1);
    expect(failed.generation).toBe(first.generation + 1);
    expect(failed.failureReason).toBe(`rank 0 did not start within 300 s (startTimeoutSeconds): ${reason}`);
    // Failed in the tick that passed the deadline (a reconcile a tick here), not one before.
    expect(failedAt - askedAt).toBeLessThan(300_000);
    expect(s.clock.now() - askedAt).toBeGreaterThanOrEqual(300_000);
    // Its next generation starts and runs: no deadline once all of it runs.
    s.executor.starting.delete(id);
    await s.ticks(15);
    expect(s.service.job(id)).toMatchObject({ state: 'running', restarts: 1 });
  });

  it('counts no start deadline while the executor fails: a generation asked for during an outage gets all of it once it answers', async () => {
    const s = await service({ startTimeoutSeconds: 300 });
    s.executor.down = true;
    const { id } = (await s.request('POST', '/v1/jobs', { class: 'bert', workload })).body;
    s.executor.starting.set(id, 'ContainerCreating');
    await s.ticks(12); // 12 minutes of outage, the job placed meanwhile
    expect(s.service.job(id)).toMatchObject({ state: 'running', restarts: 0 });
    s.executor.down = false;
    // Counted from when the executor answered: not failed at once (asked 12 minutes ago)...
    await s.ticks(1);
    expect(s.service.job(id)).toMatchObject({ state: 'running', restarts: 0 });
    // ...but once 5 minutes of starting have passed since.
    for (let i = 0; i < 12 && s.service.job(id).restarts === 0; i++) await s.ticks(1);
    expect(s.service.job(id).restarts).toBe(1);
  });

  it('counts no start deadline for a job whose replicas the executor could not make for no fault of its own, only for that job', async () => {
    const s = await service({ startTimeoutSeconds: 300 });
    s.executor.writesFailing = true;
    const { id } = (await s.request('POST', '/v1/jobs', { class: 'bert', workload })).body;
    s.executor.unmade.add(id);
    // Another job whose pod never starts: its deadline runs whatever befalls the first's creates.
    const other = (await s.request('POST', '/v1/jobs', { class: 'cifar10', workload })).body.id;
    s.executor.starting.set(other, 'ImagePullBackOff');
    await s.ticks(12); // 12 minutes of an admission webhook down for the first job's pods
    expect(s.service.job(id)).toMatchObject({ state: 'running', restarts: 0 });
    expect(s.service.job(other).restarts).toBeGreaterThan(0);
    s.executor.writesFailing = false;
    s.executor.unmade.delete(id);
    s.executor.starting.set(id, 'ContainerCreating');
    await s.ticks(1);
    expect(s.service.job(id)).toMatchObject({ state: 'running', restarts: 0 });
    for (let i = 0; i < 12 && s.service.job(id).restarts === 0; i++) await s.ticks(1);
    expect(s.service.job(id).restarts).toBe(1);
  });

  it('a job whose rank 0 exits 0 as another rank passes its start deadline is done, not failed', async () => {
    const s = await service({ startTimeoutSeconds: 300, maxRestarts: 0 });
    const { id } = (await s.request('POST', '/v1/jobs', { class: 'bert', workload })).body;
    s.executor.starting.set(id, 'ContainerCreating');
    s.executor.now = () => s.clock.now();
    await s.ticks(3);
    const { generation, allocation } = s.service.job(id);
    expect(allocation.length).toBeGreaterThan(0);
    const askedAt = s.executor.asked.get(`${id}/${generation}`)!;
    // Up to the tick whose pass crosses the deadline, then rank 0 exits 0 in that very pass.
    while (s.clock.now() + 60_000 - askedAt < 300_000) await s.ticks(1);
    s.executor.statuses.set(`${id}/${generation}/0`, { phase: 'succeeded', exitCode: 0 });
    await s.ticks(1);
    expect(s.service.job(id)).toMatchObject({ state: 'done', exitCode: null });
  });

  it('fails a generation none of whose replicas was ever made, after startTimeoutSeconds, saying so', async () => {
    const s = await service({ startTimeoutSeconds: 300, maxRestarts: 0 });
    const { id } = (await s.request('POST', '/v1/jobs', { class: 'bert', workload })).body;
    s.executor.unmade.add(id);
    await s.ticks(12);
    expect(s.service.job(id)).toMatchObject({
      state: 'failed',
      failureReason:
        'rank 0 did not start within 300 s (startTimeoutSeconds): no replica was made (the executor log says why) (after 0 restarts)',
    });
  });

  it('marks the job done, not to run again, when its rank 0 exited 0 on its own just before a tick took all its GPUs', async () => {
    const s = await service();
    const { id } = (await s.request('POST', '/v1/jobs', { class: 'bert', workload })).body;
    await s.ticks(6);
    const job = s.service.job(id);
    expect(job.state).toBe('running');
    // It ended before the tick below moved the job on (so it cannot have left for the new generation).
    const old = {
      jobId: id,
      generation: job.generation,
      node: job.allocation[0]!,
      exitCode: 0,
      endedAt: s.clock.now() - 5000,
    };
    // A budget cut: the next tick takes the job's GPUs (width 0, a new generation) before the executor
    // has seen its rank 0 exit 0, which it then reports once, as a replica no longer wanted.
    // (A budget below one node, as an older boa accepted and stored; the API now refuses it.)
    s.service.state.budget = { gpuHoursPerHour: 1, setAt: s.clock.now() };
    void s.service.planner.request('budget');
    await s.service.planner.idle();
    await s.scheduler.tick();
    await s.service.execution.settle();
    expect(s.service.job(id)).toMatchObject({ state: 'waiting', width: 0 });
    s.executor.endedBefore.push({ ...old, rank: 0, phase: 'succeeded' });
    s.service.execution.reconcile();
    await s.service.execution.settle();
    expect(s.service.job(id).state).toBe('done');
    // GPUs back: nothing of it is asked for again.
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 30 })).status).toBe(200);
    await s.service.planner.idle();
    await s.ticks(4);
    expect(s.executor.last(id)).toBeUndefined();
  });

  it('marks the job done when rank 0 exits 0', async () => {
    const s = await service();
    const { id } = (await s.request('POST', '/v1/jobs', { class: 'bert', workload })).body;
    await s.ticks(4);
    const job = s.service.job(id);
    s.executor.exits.set(`${id}/${job.generation}/0`, 0);
    await s.ticks(1);
    expect(s.service.job(id)).toMatchObject({ state: 'done', width: 0, exitCode: null });
    await s.ticks(1);
    expect(s.executor.last(id)).toBeUndefined();
  });

  it("takes every other job's step when one job's fails: a job done is not lost to another's store error", async () => {
    const s = await service();
    const a = (await s.request('POST', '/v1/jobs', { class: 'bert', workload })).body.id as number;
    const b = (await s.request('POST', '/v1/jobs', { class: 'bert', workload })).body.id as number;
    await s.ticks(4);
    for (const id of [a, b]) s.executor.exits.set(`${id}/${s.service.job(id).generation}/0`, 0);
    const finishJob = s.service.finishJob.bind(s.service);
    let broken = true;
    s.service.finishJob = (id, ...rest) => {
      if (broken && id === a) throw new Error('SQLITE_FULL: database or disk is full');
      return finishJob(id, ...rest);
    };
    await s.ticks(1);
    expect(s.service.job(b).state).toBe('done');
    expect(s.service.job(a).state).toBe('running');
    // Level-triggered: the next pass, the disk freed, finishes it.
    broken = false;
    await s.ticks(1);
    expect(s.service.job(a).state).toBe('done');
  });

  /** Two bert jobs running on GPUs after four ticks, and when the ledger's open interval began. */
  async function twoRunning(config: Record<string, unknown> = {}) {
    const s = await service(config);
    const a = (await s.request('POST', '/v1/jobs', { class: 'bert', workload })).body.id as number;
    const b = (await s.request('POST', '/v1/jobs', { class: 'bert', workload })).body.id as number;
    await s.ticks(4);
    const from = s.service.state.allocatedFrom;
    const [widthA, widthB] = [s.service.job(a).width, s.service.job(b).width];
    expect(widthA * widthB).toBeGreaterThan(0);
    return { s, a, b, from, widthA, widthB };
  }

  it('finishes jobs that ended unseen (the service down) in the order they ended, each at its end', async () => {
    const { s, a, b, from, widthA, widthB } = await twoRunning();
    expect(s.service.state.allocatedGpus).toBe(widthA + widthB);
    // Both rank 0s exited 0 while nothing looked: a (listed first) an hour in, b ten minutes in.
    s.executor.statuses.set(`${a}/${s.service.job(a).generation}/0`, {
      phase: 'succeeded',
      exitCode: 0,
      endedAt: from + 3_000_000,
    });
    s.executor.statuses.set(`${b}/${s.service.job(b).generation}/0`, {
      phase: 'succeeded',
      exitCode: 0,
      endedAt: from + 600_000,
    });
    s.clock.advance(3600);
    s.service.execution.reconcile();
    await s.service.execution.settle();
    expect(s.service.job(b)).toMatchObject({ state: 'done', finishedAt: from + 600_000 });
    expect(s.service.job(a)).toMatchObject({ state: 'done', finishedAt: from + 3_000_000 });
    // The ledger: both jobs' GPUs for ten minutes, then a's alone until its end.
    const allocated = s.repo.ledger
      .allocationSince(from)
      .reduce((sum, x) => sum + x.gpus * (x.to - x.from), 0);
    expect(allocated).toBe((widthA + widthB) * 600_000 + widthA * 2_400_000);
  });

  it('finishes a job that ended unseen at its end even when another fails for good in the same pass', async () => {
    // Found in review: the failure (finished at the clock's now) ran first and moved the ledger's
    // interval to now, so the done job's end was clamped to now, its GPUs booked 50 minutes too long.
    const { s, a, b, from, widthA, widthB } = await twoRunning({ maxRestarts: 0 });
    s.executor.statuses.set(`${a}/${s.service.job(a).generation}/0`, {
      phase: 'succeeded',
      exitCode: 0,
      endedAt: from + 600_000,
    });
    s.executor.statuses.set(`${b}/${s.service.job(b).generation}/0`, {
      phase: 'failed',
      exitCode: 1,
      reason: 'exited 1',
      endedAt: from + 3_000_000,
    });
    s.clock.advance(3600);
    s.service.execution.reconcile();
    await s.service.execution.settle();
    expect(s.service.job(b).state).toBe('failed');
    expect(s.service.job(a)).toMatchObject({ state: 'done', finishedAt: from + 600_000 });
    // The ledger: a's GPUs until its end only.
    const allocatedA = s.repo.ledger
      .allocationSince(from)
      .filter((x) => x.to <= from + 600_000)
      .reduce((sum, x) => sum + x.gpus * (x.to - x.from), 0);
    expect(allocatedA).toBe((widthA + widthB) * 600_000);
  });

  it('books a job that failed for good unseen until its last replica ended, not until boa saw it', async () => {
    // Found in review: finished at the clock's now, its GPUs were booked for the 50 minutes boa was down.
    const { s, a, b, from, widthA, widthB } = await twoRunning({ maxRestarts: 0 });
    const ranks = s.executor.last(b)!.replicas;
    for (const { rank } of ranks)
      s.executor.statuses.set(`${b}/${s.service.job(b).generation}/${rank}`, {
        phase: 'failed',
        exitCode: 1,
        reason: 'exited 1',
        endedAt: from + 300_000 + rank * 300_000,
      });
    s.clock.advance(3600);
    s.service.execution.reconcile();
    await s.service.execution.settle();
    const end = from + 300_000 + (ranks.length - 1) * 300_000;
    expect(s.service.job(b)).toMatchObject({ state: 'failed', finishedAt: end });
    expect(s.service.job(a).state).toBe('running');
    const allocated = s.repo.ledger
      .allocationSince(from)
      .reduce((sum, x) => sum + x.gpus * (x.to - x.from), 0);
    expect(allocated).toBe((widthA + widthB) * (end - from));
  });

  it("marks the job done when an older generation's rank 0 exited 0 on its own, as the job was rescaled", async () => {
    // A new generation (as a rescale makes) before the executor saw the old one's exits: a peer's,
    // and rank 0's stopped by boa (interrupted), change nothing.
    const { s, id, job, old } = await movedOn();
    s.executor.endedBefore.push(
      { ...old, rank: 1, phase: 'succeeded' },
      { ...old, rank: 0, phase: 'failed', interrupted: true },
    );
    await s.ticks(1);
    expect(s.service.job(id)).toMatchObject({ state: 'running', restarts: 0 });
    // Its rank 0 ended on its own with 0 before the new generation: the job finished, not run again.
    s.executor.endedBefore.push({
      ...old,
      rank: 0,
      phase: 'succeeded',
      endedAt: job.generationSince! - 5000,
    });
    await s.ticks(1);
    expect(s.service.job(id)).toMatchObject({ state: 'done', restarts: 0 });
  });

  it("runs on when an older generation's rank 0 exited 0 after the rescale: a client leaving for the new one (found in a trial)", async () => {
    // boa's clients exit 0 when their allocation shows a new generation, before the executor stops them;
    // under load 14 of 30 rescaled jobs were marked done with their work undone.
    const { s, id, job, old } = await movedOn();
    s.executor.endedBefore.push({
      ...old,
      rank: 0,
      phase: 'succeeded',
      endedAt: job.generationSince! + 3000,
    });
    await s.ticks(1);
    expect(s.service.job(id)).toMatchObject({
      state: 'running',
      restarts: 0,
      generation: old.generation + 1,
    });
    expect(s.executor.last(id)?.generation).toBe(old.generation + 1);
    // Moved on again, 30 s later: when the old generation ended is no longer kept, so an exit before
    // this move (here 1 s after the first) may have been a client leaving: not done (found in review).
    s.clock.advance(30);
    job.generation += 1;
    job.generationSince = s.clock.now();
    s.executor.endedBefore.push({
      ...old,
      rank: 0,
      phase: 'succeeded',
      endedAt: (job.generationSince as number) - 29_000,
    });
    await s.ticks(1);
    expect(s.service.job(id).state).toBe('running');
    // Unknown when it ended (or when the generation began): it may have left, so it runs once more.
    s.executor.endedBefore.push({ ...old, rank: 0, phase: 'succeeded' });
    await s.ticks(1);
    expect(s.service.job(id).state).toBe('running');
  });

  it('keeps when a generation began across a restart, so a client that left for it is not taken as done', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'boa-generation-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const clock = new ManualClock();
    const first = await service({}, { dataDir, clock });
    const { id } = (await first.request('POST', '/v1/jobs', { class: 'bert', workload })).body;
    await first.ticks(4);
    const before = first.service.job(id);
    const old = { jobId: id, generation: before.generation, node: before.allocation[0]!, exitCode: 0 };
    // A budget cut: a tick takes its GPUs (a new generation, stored); then boa is killed.
    expect((await first.request('PUT', '/v1/budget', { gpuHoursPerHour: 4 })).status).toBe(200);
    await first.service.planner.idle();
    await first.ticks(1);
    const moved = first.service.job(id);
    expect(moved.generation).toBeGreaterThan(old.generation);
    expect(moved.generationSince).not.toBeNull();
    await first.close();

    // The new service learns the old generation's rank 0 exited 0 a second after the change.
    const second = await service({}, { dataDir, clock });
    expect(second.service.job(id).generationSince).toBe(moved.generationSince);
    second.executor.endedBefore.push({
      ...old,
      rank: 0,
      phase: 'succeeded',
      endedAt: (moved.generationSince as number) + 1000,
    });
    second.service.execution.reconcile();
    await second.service.execution.settle();
    expect(second.service.job(id).state).not.toBe('done');
  });

  it('resumes a job whose replica was stopped from outside at once, not done and not counted as a restart', async () => {
    const s = await service({ maxRestarts: 1, restartBackoffSeconds: 600 });
    const { id } = (await s.request('POST', '/v1/jobs', { class: 'bert', workload })).body;
    await s.ticks(4);
    const first = s.service.job(id).generation;
    for (let time = 1; time <= 3; time++) {
      const job = s.service.job(id);
      s.executor.interrupted.set(`${id}/${job.generation}/0`, 600_000);
      await s.ticks(1);
      // A new generation on the same GPUs right away (the backoff of 600 s is not applied).
      expect(s.service.job(id)).toMatchObject({ state: 'running', restarts: 0, restartNotBefore: null });
      expect(s.service.job(id).generation).toBe(first + time);
      await s.ticks(1);
      expect(s.executor.last(id)?.generation).toBe(first + time);
    }
    // Three interruptions with maxRestarts 1: still running; its own exit 0 then completes it.
    s.executor.exits.set(`${id}/${s.service.job(id).generation}/0`, 0);
    await s.ticks(1);
    expect(s.service.job(id)).toMatchObject({ state: 'done', restarts: 0 });
  });

  it('sees an exit between ticks: a failed job restarts (and a done one ends) without waiting for a tick', async () => {
    const s = await service({ replicaCheckSeconds: 0.05, restartBackoffSeconds: 0.05 });
    const { id } = (await s.request('POST', '/v1/jobs', { class: 'bert', workload })).body;
    await s.ticks(4);
    const first = s.service.job(id).generation;
    // No tick from here on: only the check of running replicas can see these exits.
    s.executor.exits.set(`${id}/${first}/0`, 3);
    await waitFor(() => s.service.job(id).restarts === 1);
    expect(s.service.job(id)).toMatchObject({ state: 'running', exitCode: 3, generation: first + 1 });
    // The backoff runs on the service's clock, which only the test's ticks move.
    await s.ticks(1);
    await waitFor(() => s.executor.last(id)?.generation === first + 1);
    s.executor.exits.set(`${id}/${first + 1}/0`, 0);
    await waitFor(() => s.service.job(id).state === 'done');
  });

  it('restarts a job whose every replica failed when its backoff ends, not at the next tick', async () => {
    const s = await service({ replicaCheckSeconds: 0.05, restartBackoffSeconds: 10 });
    const { id } = (await s.request('POST', '/v1/jobs', { class: 'bert', workload })).body;
    await s.ticks(4);
    const first = s.service.job(id).generation;
    const ranks = s.executor.last(id)?.replicas.map((r) => r.rank) ?? [];
    // Every replica exits 3 at once (a command that fails at start): none is left running.
    for (const rank of ranks) s.executor.exits.set(`${id}/${first}/${rank}`, 3);
    await waitFor(() => s.service.job(id).restarts === 1);
    // 11 s later on the service's clock, with no tick (they are 60 s apart): the 10 s backoff is over.
    s.clock.advance(11);
    await waitFor(() => s.executor.last(id)?.generation === first + 1);
  });

  it('resumes a job whose every replica was stopped from outside without waiting for a tick', async () => {
    const s = await service({ replicaCheckSeconds: 0.05 });
    const { id } = (await s.request('POST', '/v1/jobs', { class: 'bert', workload })).body;
    await s.ticks(4);
    const first = s.service.job(id).generation;
    const ranks = s.executor.last(id)?.replicas.map((r) => r.rank) ?? [];
    for (const rank of ranks) s.executor.interrupted.set(`${id}/${first}/${rank}`, 600_000);
    // "At once" (docs/jobs.md): the new generation's replicas are asked for with no tick.
    await waitFor(() => s.executor.last(id)?.generation === first + 1);
  });

  it('resumes a job whose replica is being deleted from outside, even when a peer fails meanwhile', async () => {
    const s = await service({ maxRestarts: 0, restartBackoffSeconds: 600 });
    const { id } = (await s.request('POST', '/v1/jobs', { class: 'bert', workload })).body;
    await s.ticks(4);
    const { generation } = s.service.job(id);
    const ranks = s.executor.last(id)?.replicas.map((r) => r.rank) ?? [];
    // Rank 0's pod is being deleted by a drain; the others lose their rendezvous and fail.
    s.executor.statuses.set(`${id}/${generation}/0`, {
      phase: 'stopping',
      reason: 'deleted while running',
      interrupted: true,
      ranForMs: 600_000,
    });
    for (const rank of ranks.filter((r) => r > 0)) s.executor.exits.set(`${id}/${generation}/${rank}`, 1);
    await s.ticks(1);
    // With maxRestarts 0 a failure would have ended the job.
    expect(s.service.job(id)).toMatchObject({ state: 'running', restarts: 0, generation: generation + 1 });
  });

  it('counts an interruption of a replica that ran under interruptedMinRunSeconds as a failure, so it cannot loop', async () => {
    const s = await service({ maxRestarts: 1, restartBackoffSeconds: 90, interruptedMinRunSeconds: 60 });
    const { id } = (await s.request('POST', '/v1/jobs', { class: 'bert', workload })).body;
    await s.ticks(4);
    // Stopped from outside 5 s after it started (a node that evicts it at once): a restart with backoff.
    s.executor.interrupted.set(`${id}/${s.service.job(id).generation}/0`, 5_000);
    await s.ticks(1);
    const restarted = s.service.job(id);
    expect(restarted).toMatchObject({ state: 'running', restarts: 1, exitCode: 0 });
    expect(restarted.restartNotBefore).not.toBeNull();
    expect(restarted.failureReason).toMatch(
      /exited 0 after SIGTERM, after it ran 5 s \(under interruptedMinRunSeconds/,
    );
    for (let i = 0; i < 5 && s.executor.last(id)?.generation !== restarted.generation; i++) await s.ticks(1);
    expect(s.executor.last(id)?.generation).toBe(restarted.generation);
    // Again, past maxRestarts: failed, not resumed forever.
    s.executor.interrupted.set(`${id}/${restarted.generation}/0`, 59_000);
    await s.ticks(1);
    expect(s.service.job(id)).toMatchObject({ state: 'failed', restarts: 1 });
    expect(s.service.job(id).failureReason).toContain('counted as a failure');
  });

  it("fails a job at once when a replica's exit says a restart cannot help, even when a peer's plain failure comes first", async () => {
    const s = await service({ maxRestarts: 3, restartBackoffSeconds: 90 });
    const { id } = (await s.request('POST', '/v1/jobs', { class: 'bert', workload })).body;
    await s.ticks(4);
    const { generation } = s.service.job(id);
    const ranks = s.executor.last(id)?.replicas.map((r) => r.rank) ?? [];
    expect(ranks.length).toBeGreaterThan(1);
    // Rank 0 loses its peer and exits 1; the last rank's command was not found.
    s.executor.exits.set(`${id}/${generation}/0`, 1);
    const last = ranks.at(-1)!;
    s.executor.statuses.set(`${id}/${generation}/${last}`, {
      phase: 'failed',
      exitCode: 127,
      reason: 'exited 127',
      notRestartable: 'not restarted: check the PATH',
    });
    await s.ticks(1);
    expect(s.service.job(id)).toMatchObject({
      state: 'failed',
      restarts: 0,
      exitCode: 127,
      failureReason: `rank ${last} exited 127; not restarted: check the PATH`,
    });
  });

  it('restarts a failing job as a new generation after a backoff, then fails it after maxRestarts', async () => {
    const s = await service({ maxRestarts: 2, restartBackoffSeconds: 90 });
    const { id } = (await s.request('POST', '/v1/jobs', { class: 'bert', workload })).body;
    await s.ticks(4);
    const generations: number[] = [];
    for (let attempt = 0; attempt < 3; attempt++) {
      const job = s.service.job(id);
      expect(job.state).toBe('running');
      expect(s.executor.last(id)?.generation).toBe(job.generation);
      generations.push(job.generation);
      s.executor.exits.set(`${id}/${job.generation}/0`, 3);
      await s.ticks(1);
      if (attempt < 2) {
        expect(s.service.job(id)).toMatchObject({ restarts: attempt + 1, exitCode: 3 });
        // Backoff (90 s, then 180 s): no replicas for the next tick (60 s later), then a new generation.
        await s.ticks(1);
        expect(s.executor.last(id)).toBeUndefined();
        for (let i = 0; i < 5 && !s.executor.last(id); i++) await s.ticks(1);
        expect(s.executor.last(id)?.generation).toBeGreaterThan(generations.at(-1) as number);
      }
    }
    expect(new Set(generations).size).toBe(3);
    const failed = s.service.job(id);
    expect(failed).toMatchObject({ state: 'failed', exitCode: 3, restarts: 2, width: 0 });
    expect(failed.failureReason).toContain('rank 0 exited 3');
    const listed = await s.request('GET', '/v1/jobs?state=failed');
    expect(listed.body.jobs.map((j: { id: number }) => j.id)).toEqual([id]);
    // The service keeps going.
    const next = await s.request('POST', '/v1/jobs', { class: 'bert', workload });
    await s.ticks(2);
    expect(s.service.job(next.body.id).state).toBe('running');
  });

  it('fails a job at once, its restarts unused, when the executor says no restart mends its failure (a checkpoint claim gone)', async () => {
    const s = await service({ maxRestarts: 3, restartBackoffSeconds: 90 });
    const { id } = (await s.request('POST', '/v1/jobs', { class: 'bert', workload })).body;
    await s.ticks(4);
    const { generation } = s.service.job(id);
    const gone = 'ContainerCreating: volume claim "ckpt" no longer exists in namespace boa-jobs';
    s.executor.statuses.set(`${id}/${generation}/0`, {
      phase: 'failed',
      reason: gone,
      notRestartable: 'not restarted: a restart would fail the same way',
    });
    await s.ticks(1);
    const failed = s.service.job(id);
    expect(failed).toMatchObject({ state: 'failed', restarts: 0, width: 0 });
    expect(failed.failureReason).toBe(`rank 0 ${gone}; not restarted: a restart would fail the same way`);
    expect((await s.request('GET', `/v1/jobs/${id}`)).body.failedRank).toBe(0);
  });

  it('leaves a failed or interrupted job as the store has it when saving the restart fails', async () => {
    const s = await service();
    const { id } = (await s.request('POST', '/v1/jobs', { class: 'bert', workload })).body;
    await s.ticks(4);
    const job = s.service.job(id);
    expect(job.state).toBe('running');
    const columns = (j: { generation: number; restarts: number; restartNotBefore: number | null }) => ({
      generation: j.generation,
      restarts: j.restarts,
      restartNotBefore: j.restartNotBefore,
    });
    const stored = () => columns(s.repo.getJob(id)!);
    const before = stored();
    expect(columns(job)).toEqual(before);
    // A replica fails, and the restart cannot be written (disk full): memory stays as stored, and the
    // failure is handled again once the store takes it.
    s.executor.exits.set(`${id}/${job.generation}/0`, 3);
    failOnce(s.repo, 'saveJobState');
    s.service.execution.reconcile();
    await s.service.execution.settle();
    expect(columns(job)).toEqual(before);
    expect(stored()).toEqual(before);
    await s.ticks(1);
    expect(columns(job)).toEqual(stored());
    expect(stored()).toMatchObject({ generation: before.generation + 1, restarts: 1 });
    // The same for a replica stopped from outside (resumed, not counted as a restart).
    for (let i = 0; i < 5 && !s.executor.last(id); i++) await s.ticks(1);
    const resumedFrom = stored();
    s.executor.interrupted.set(`${id}/${job.generation}/0`, 3_600_000);
    failOnce(s.repo, 'saveJobState');
    s.service.execution.reconcile();
    await s.service.execution.settle();
    expect(columns(job)).toEqual(resumedFrom);
    expect(stored()).toEqual(resumedFrom);
  });

  it('keeps a failed job waiting out its backoff across a service restart (the backoff is stored)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'boa-backoff-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const clock = new ManualClock();
    const config = { maxRestarts: 3, restartBackoffSeconds: 600 };
    const first = await service(config, { dataDir, clock });
    const { id } = (await first.request('POST', '/v1/jobs', { class: 'bert', workload })).body;
    await first.ticks(4);
    const failedGeneration = first.service.job(id).generation;
    first.executor.exits.set(`${id}/${failedGeneration}/0`, 3);
    await first.ticks(1);
    const failed = first.service.job(id);
    expect(failed).toMatchObject({ state: 'running', restarts: 1, exitCode: 3 });
    expect(failed.restartNotBefore).not.toBeNull();
    const notBefore = failed.restartNotBefore as number;
    // Most of the 600 s are still ahead (the failure was seen at most one 60 s tick ago).
    expect(notBefore - clock.now()).toBeGreaterThan(500_000);
    expect((await first.request('GET', `/v1/jobs/${id}`)).body.restartNotBefore).toBe(
      new Date(notBefore).toISOString(),
    );
    await first.close();

    // A new service on the same store (as after kill -9 and a restart): no replicas until the backoff ends.
    const second = await service(config, { dataDir, clock });
    expect(second.service.job(id).restartNotBefore).toBe(notBefore);
    let ticked = 0;
    while (clock.now() < notBefore) {
      await second.ticks(1);
      ticked += 1;
      // The reconcile after a tick reads the clock at most this late: still inside the backoff.
      if (clock.now() < notBefore) expect(second.executor.last(id)).toBeUndefined();
    }
    expect(ticked).toBeGreaterThan(5);
    for (let i = 0; i < 3 && !second.executor.last(id); i++) await second.ticks(1);
    const restarted = second.service.job(id);
    expect(restarted.state).toBe('running');
    expect(second.executor.last(id)?.generation).toBe(restarted.generation);
    expect(restarted.generation).toBeGreaterThan(failedGeneration);
    // The backoff over, the API no longer shows it as a time to come.
    expect((await second.request('GET', `/v1/jobs/${id}`)).body.restartNotBefore).toBeNull();
  });

  it('keeps running a generation whose backoff ended when the clock then steps back into it (NTP)', async () => {
    const clock = new ManualClock();
    const s = await service({ maxRestarts: 3, restartBackoffSeconds: 60 }, { clock });
    const { id } = (await s.request('POST', '/v1/jobs', { class: 'bert', workload })).body;
    await s.ticks(4);
    s.executor.exits.set(`${id}/${s.service.job(id).generation}/0`, 3);
    await s.ticks(1);
    const notBefore = s.service.job(id).restartNotBefore as number;
    expect(notBefore).toBeGreaterThan(clock.now());
    while (clock.now() < notBefore) await s.ticks(1);
    const generation = s.service.job(id).generation;
    expect(s.service.execution.desired(clock.now()).map((j) => j.jobId)).toEqual([id]);
    clock.advance(-120);
    expect(s.service.execution.desired(clock.now())).toEqual([
      expect.objectContaining({ jobId: id, generation }),
    ]);
  });

  it('runs a reconcile asked for while one is in flight as soon as that one ends, not at the next tick', async () => {
    const s = await service();
    await s.ticks(2);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const reconcile = s.executor.reconcile.bind(s.executor);
    let hold = true;
    s.executor.reconcile = async (desired) => {
      if (hold) {
        hold = false;
        await held;
      }
      return reconcile(desired);
    };
    const before = s.executor.calls.length;
    s.service.execution.reconcile();
    await new Promise((r) => setTimeout(r, 20)); // the pass has begun, and waits
    // A tick asks meanwhile (it gave a job its GPUs): one more pass follows the one in flight.
    s.service.execution.reconcile();
    s.service.execution.reconcile();
    release();
    await s.service.execution.settle();
    expect(s.executor.calls.length - before).toBe(2);
  });

  it('marks a silent self-launched job lost after leaseSeconds and frees its GPUs; polls and reports renew', async () => {
    const s = await service({ leaseSeconds: 300 });
    const quiet = (await s.request('POST', '/v1/jobs', { class: 'bert' })).body;
    const chatty = (await s.request('POST', '/v1/jobs', { class: 'bert' })).body;
    for (let i = 0; i < 12; i++) {
      await s.ticks(1);
      // 60 s per tick: the chatty job polls every tick, so it is never silent for 300 s.
      await s.request('GET', `/v1/jobs/${chatty.id}/allocation`, undefined, chatty.token);
    }
    expect(s.service.job(chatty.id).state).toBe('running');
    const lost = s.service.job(quiet.id);
    expect(lost.state).toBe('lost');
    expect(lost.failureReason).toMatch(/no allocation poll or progress report for \d+ s \(lease 300 s\)/);
    expect(lost.allocation).toEqual([]);
    const status = (await s.request('GET', '/v1/status')).body;
    expect(status.jobs.lost).toBe(1);
    expect(status.gpus.allocated + status.gpus.lent).toBe(s.service.job(chatty.id).width);
    // A lost job's token no longer moves it.
    const late = await s.request('POST', `/v1/jobs/${quiet.id}/progress`, { statEpoch: 1 }, quiet.token);
    expect(late.status).toBe(409);
  });

  it('renews no lease on a refused report: it changes nothing stored', async () => {
    const s = await service({ leaseSeconds: 300 });
    const watched = (await s.request('POST', '/v1/jobs', { class: 'bert' })).body;
    for (let i = 0; i < 4 && s.service.job(watched.id).state !== 'running'; i++) await s.ticks(1);
    expect(s.service.job(watched.id).state).toBe('running');
    const seenAt = () => s.repo.getJob(watched.id)?.lastSeenAt;
    const stored = seenAt();
    for (let i = 0; i < 11; i++) {
      await s.ticks(1);
      // The job's launcher sends only reports boa refuses (a generation it has not reached).
      const refused = await s.request(
        'POST',
        `/v1/jobs/${watched.id}/progress`,
        { statEpoch: 0, generation: 999 },
        watched.token,
      );
      if (s.service.job(watched.id).state === 'running') {
        expect(refused.status).toBe(409);
        expect(seenAt()).toBe(stored);
      }
    }
    expect(s.service.job(watched.id).state).toBe('lost');
  });

  it('on a database started afresh, registers no job with a workload until the executor has answered once (it may hold old jobs of the same ids)', async () => {
    const executor = new ScriptedExecutor();
    executor.down = true;
    const s = await startService({ executor, config: { priorRates: { bert: 1 } } });
    cleanups.push(s.close);
    const refused = await s.request('POST', '/v1/jobs', { class: 'bert', workload });
    expect(refused.status).toBe(503);
    expect(refused.body.error).toMatchObject({ code: 'executor_not_ready' });
    expect(refused.body.error.message).toContain('the API server is down');
    expect(s.repo.listJobs(10).length).toBe(0);
    // A self-launched job is never judged by replicas: registered as ever.
    expect((await s.request('POST', '/v1/jobs', { class: 'bert' })).status).toBe(201);
    // The executor answers, showing replicas of an old job 40: new jobs are numbered above it.
    expect(await answeredShowing(s, executor, 40)).toBe(41);
  });

  it('after a long time down (a volume restored from a snapshot), waits for the executor before numbering jobs with a workload', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'boa-restored-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const clock = new ManualClock();
    const first = await startService({ dataDir, clock, executor: new ScriptedExecutor() });
    expect((await first.request('POST', '/v1/jobs', { class: 'bert', workload })).status).toBe(201);
    await first.ticks(1);
    await first.close();
    // Back a day later, from a snapshot that does not know job 7, whose pods the executor still holds.
    clock.advance(24 * 3600);
    const executor = new ScriptedExecutor();
    executor.down = true;
    const s = await startService({ dataDir, clock, executor });
    cleanups.push(s.close);
    const refused = await s.request('POST', '/v1/jobs', { class: 'bert', workload });
    expect(refused.status).toBe(503);
    expect(refused.body.error.message).toContain('last ticked long ago');
    expect(await answeredShowing(s, executor, 7)).toBe(8);
  });

  it('refuses a workload when the service runs no executor, storing nothing', async () => {
    const s = await startService({ executor: null });
    cleanups.push(s.close);
    const res = await s.request('POST', '/v1/jobs', { class: 'bert', workload });
    expect(res.status).toBe(422);
    expect(res.body.error.field).toBe('workload');
    expect((await s.request('GET', '/v1/jobs')).body.jobs).toEqual([]);
  });
});

/**
 * The executor answers at last, showing an old job `oldJobId` ended: the id of the job with a workload
 * registered next (201).
 */
async function answeredShowing(
  s: Awaited<ReturnType<typeof startService>>,
  executor: ScriptedExecutor,
  oldJobId: number,
): Promise<number> {
  executor.down = false;
  executor.endedBefore.push({
    jobId: oldJobId,
    generation: 1,
    rank: 0,
    node: 'n',
    phase: 'succeeded',
    exitCode: 0,
  });
  s.service.execution.reconcile();
  await s.service.execution.settle();
  const made = await s.request('POST', '/v1/jobs', { class: 'bert', workload });
  expect(made.status).toBe(201);
  return made.body.id;
}

/**
 * Polls in real time (the executor's follow-ups are real timers, 1 s apart at most), failing after 20 s:
 * it returns as soon as the condition holds, and a loaded machine can take several follow-ups' time.
 */
async function waitFor(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}
