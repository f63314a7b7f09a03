/**
 * Restarts around the executor (src/service/execution.ts), in process with a virtual clock: replicas
 * stopped from outside resumed, failures restarted after a backoff (kept across a service restart) up
 * to maxRestarts or failed at once, and exits seen between ticks without waiting for one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanups, runCleanups, service, waitFor, workload } from './execution-fixture.ts';
import { ManualClock } from './harness.ts';
import { failOnce } from '../helpers/fail-once.ts';

afterEach(runCleanups);

describe('execution', () => {
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
});
