/**
 * A job that crashes and is being restarted says why in `jobs list` and `jobs show` while it still
 * runs, not only once it has failed for good (its API view has the last exit code and reason then).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { DesiredJob, Executor, ReplicaStatus } from '../../src/service/ports.ts';
import { startCliService } from './cli-harness.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

/** The first generation of every job that runs exits 3; later generations run. */
function crashesOnce(): Executor {
  const first = new Map<number, number>();
  return {
    kind: 'local',
    reconcile: async (desired: readonly DesiredJob[]) =>
      desired.flatMap((job) =>
        job.replicas.map((r): ReplicaStatus => {
          if (!first.has(r.jobId)) first.set(r.jobId, r.generation);
          const base = { jobId: r.jobId, generation: r.generation, rank: r.rank, node: r.node };
          return r.generation === first.get(r.jobId)
            ? { ...base, phase: 'failed', exitCode: 3, reason: 'exited 3' }
            : { ...base, phase: 'running' };
        }),
      ),
    close: async () => {},
  };
}

/** Every job's last rank exits 7; the others run. */
function lastRankFails(): Executor {
  return {
    kind: 'local',
    reconcile: async (desired: readonly DesiredJob[]) =>
      desired.flatMap((job) =>
        job.replicas.map((r): ReplicaStatus => {
          const base = { jobId: r.jobId, generation: r.generation, rank: r.rank, node: r.node };
          return r.rank === job.replicas.length - 1
            ? { ...base, phase: 'failed', exitCode: 7, reason: 'exited 7' }
            : { ...base, phase: 'running' };
        }),
      ),
    close: async () => {},
  };
}

describe('boa jobs: a restarted job', () => {
  it('shows its restarts with the last exit code and reason while it runs again', async () => {
    const s = await startCliService({
      executor: crashesOnce(),
      config: { local: { bootSeconds: 0, releaseSeconds: 0 }, restartBackoffSeconds: 1 },
    });
    cleanups.push(s.close);
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    const { body } = await s.request('POST', '/v1/jobs', {
      class: 'cifar10',
      name: 'crashy',
      workload: { command: ['node', 'train.js'] },
    });
    // The executor's reconcile runs after each tick, never inside it: let each finish.
    for (let i = 0; i < 5; i++) {
      await s.ticks(1);
      await s.service.execution.settle();
    }
    const job = (await s.request('GET', `/v1/jobs/${body.id}`)).body;
    expect(job).toMatchObject({ state: 'running', restarts: 1, exitCode: 3 });

    const why = '1 restart, the last after exit 3: rank 0 exited 3';
    const list = await s.boa(['jobs', 'list']);
    expect(list.status, list.stderr).toBe(0);
    expect(list.stdout.trimEnd().split('\n')[1]).toMatch(new RegExp(`\\s${why}$`));
    const show = await s.boa(['jobs', 'show', 'crashy']);
    expect(show.stdout).toMatch(new RegExp(`^state\\s+running: ${why}$`, 'm'));
    // Started twice: the time shown is the first start, and says so.
    expect(show.stdout).toMatch(/^first started\s+\S/m);
    expect(show.stdout).not.toMatch(/^output/m);
  });

  it('once failed for good, show and wait point to its output, where its own words are', async () => {
    const s = await startCliService({
      executor: crashesOnce(),
      config: { local: { bootSeconds: 0, releaseSeconds: 0 }, maxRestarts: 0 },
    });
    cleanups.push(s.close);
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    const { body } = await s.request('POST', '/v1/jobs', {
      class: 'cifar10',
      name: 'broken',
      workload: { command: ['node', 'train.js'] },
    });
    for (let i = 0; i < 5; i++) {
      await s.ticks(1);
      await s.service.execution.settle();
    }
    expect((await s.request('GET', `/v1/jobs/${body.id}`)).body.state).toBe('failed');
    const show = await s.boa(['jobs', 'show', 'broken']);
    expect(show.stdout).toMatch(
      new RegExp(
        `^output\\s+boa jobs logs ${body.id} \\(rank 0, the one that failed; --rank N for the others\\)$`,
        'm',
      ),
    );
    const wait = await s.boa(['jobs', 'wait', 'broken']);
    expect(wait.status).toBe(5);
    expect(wait.stderr).toContain(
      `job ${body.id} (broken): failed (exit 3: rank 0 exited 3 (after 0 restarts)); its output: boa jobs logs ${body.id}\n`,
    );
  });

  it("failed on a rank other than 0, show and wait point to that rank's output (found in a trial: they named rank 0's)", async () => {
    const s = await startCliService({
      executor: lastRankFails(),
      config: { local: { bootSeconds: 0, releaseSeconds: 0 }, maxRestarts: 0 },
    });
    cleanups.push(s.close);
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    const { body } = await s.request('POST', '/v1/jobs', {
      class: 'cifar10',
      name: 'r1',
      workload: { command: ['node', 'train.js'] },
    });
    for (let i = 0; i < 5; i++) {
      await s.ticks(1);
      await s.service.execution.settle();
    }
    const job = (await s.request('GET', `/v1/jobs/${body.id}`)).body;
    expect(job.state).toBe('failed');
    const failedRank = Number(/^rank (\d+) /.exec(job.failureReason)?.[1]);
    // More than one replica, so the failing rank is not 0.
    expect(failedRank).toBeGreaterThan(0);
    expect(job.failedRank).toBe(failedRank);
    const show = await s.boa(['jobs', 'show', 'r1']);
    expect(show.stdout).toMatch(
      new RegExp(
        `^output\\s+boa jobs logs ${body.id} --rank ${failedRank} \\(rank ${failedRank}, the one that failed; --rank N for the others\\)$`,
        'm',
      ),
    );
    const wait = await s.boa(['jobs', 'wait', 'r1']);
    expect(wait.status).toBe(5);
    expect(wait.stderr).toContain(
      `job ${body.id} (r1): failed (exit 7: rank ${failedRank} exited 7 (after 0 restarts)); its output: boa jobs logs ${body.id} --rank ${failedRank}\n`,
    );
  });
});
