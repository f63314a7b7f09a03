/**
 * The job lifecycle around the executor (src/service/execution.ts), in process with a virtual clock:
 * the replicas asked for and their environment, the start deadline of a generation, and no job with a
 * workload registered before the executor has answered (or where there is none).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  answeredShowing,
  cleanups,
  runCleanups,
  ScriptedExecutor,
  service,
  workload,
} from './execution-fixture.ts';
import { ManualClock, startService } from './harness.ts';

afterEach(runCleanups);

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
