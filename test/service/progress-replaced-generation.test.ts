/**
 * Progress reports from a generation since replaced (src/service/progress.ts): of a job boa runs, the
 * old replicas (one still stopping, a late retry) change nothing and are answered the allocation, whose
 * newer generation tells them to stop; a self-launched job's process carries on across generations, so
 * its reports still count.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Executor } from '../../src/service/ports.ts';
import { startService } from './harness.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

/** An executor that runs nothing and reports every replica asked for as running. */
const runsEverything: Executor = {
  kind: 'local',
  checkWorkload: () => undefined,
  reconcile: async (desired) =>
    desired.flatMap((job) =>
      job.replicas.map((r) => ({
        jobId: r.jobId,
        generation: r.generation,
        rank: r.rank,
        node: r.node,
        phase: 'running' as const,
      })),
    ),
  close: async () => {},
};

/** A running cifar10 job, run by boa or self-launched, moved on to a new generation (as a rescale does). */
async function movedOn(kind: 'executed' | 'self-launched') {
  const s = await startService({
    executor: runsEverything,
    config: { local: { maxNodes: 8, bootSeconds: 0, releaseSeconds: 0 }, budget: 40 },
  });
  cleanups.push(s.close);
  await s.service.planner.idle();
  const { job, token } = s.service.registerJob(
    'cifar10',
    'a',
    kind === 'executed' ? { command: ['train'] } : undefined,
  );
  await s.ticks(3);
  await s.service.execution.settle();
  expect(job.state).toBe('running');
  const old = job.generation;
  const report = (generation: number, statEpoch: number, workDoneSeconds: number) =>
    s.request('POST', `/v1/jobs/${job.id}/progress`, { statEpoch, workDoneSeconds, generation }, token);
  expect((await report(old, 0, 100)).status).toBe(200);
  job.generation = old + 1;
  job.generationSince = s.clock.now();
  s.service.deps.repo.saveJobState(job);
  return { s, job, old, report };
}

describe('a report from a generation since replaced', () => {
  it('of a job boa runs changes nothing, stored or not, and is answered the allocation of the new one', async () => {
    const { s, job, old, report } = await movedOn('executed');
    const before = { ...s.service.deps.repo.getJob(job.id)! };
    const lastReportAt = job.lastReportAt;
    s.clock.t += 60_000;
    // More work in the epoch, the next epoch, an earlier one: the running generation resumed from its
    // checkpoint, which may be behind all of them.
    for (const [statEpoch, work] of [
      [0, 900],
      [1, 10],
    ] as const) {
      const answer = await report(old, statEpoch, work);
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ jobId: job.id, generation: old + 1, statEpoch: 0 });
    }
    expect([job.statEpoch, job.workDoneSeconds, job.lastReportAt]).toEqual([0, 100, lastReportAt]);
    // As a poll, it renews the lease (lastSeenAt); nothing else stored changes.
    expect(s.service.deps.repo.getJob(job.id)).toEqual({ ...before, lastSeenAt: s.clock.now() });
    // The running generation's reports are taken, lower work included.
    expect((await report(old + 1, 0, 40)).status).toBe(200);
    expect([job.statEpoch, job.workDoneSeconds]).toEqual([0, 40]);
  });

  it('of a self-launched job is taken: its one process carries on across generations', async () => {
    const { job, old, report } = await movedOn('self-launched');
    expect((await report(old, 0, 900)).status).toBe(200);
    expect(job.workDoneSeconds).toBe(900);
    expect((await report(old, 1, 10)).status).toBe(200);
    expect([job.statEpoch, job.workDoneSeconds]).toEqual([1, 10]);
  });
});
