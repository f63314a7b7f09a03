/**
 * What a job's progress reports teach its class (src/service/progress.ts): the 1-GPU work of the
 * statistical epoch it just finished, from that epoch's duration, one sample per epoch.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startService } from './harness.ts';
import { failOnce } from '../helpers/fail-once.ts';
import { sampleWork } from '../../src/service/work-samples.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

/**
 * A job running at its planned width since the last tick (nodes boot at once): of cifar10 (8
 * epochs), or of `one`, cifar10's first epoch alone, so its first epoch is also its last.
 */
async function runningJob(className: 'cifar10' | 'one' = 'cifar10') {
  const s = await startService({
    config: { tickSeconds: 60, local: { maxNodes: 8, bootSeconds: 0, releaseSeconds: 0 }, budget: 40 },
  });
  cleanups.push(s.close);
  const cifar10 = s.service.state.classes.get('cifar10')!.profile;
  if (className === 'one')
    s.service.putClass({ ...cifar10, name: 'one', epochs: cifar10.epochs.slice(0, 1) }, 1);
  await s.service.planner.idle();
  const { job, token } = s.service.registerJob(className, 'a');
  await s.ticks(3);
  expect(job.state).toBe('running');
  const cls = s.service.state.classes.get(className)!;
  return { s, job, token, cls };
}

describe('progress reports as work samples', () => {
  it('learns the epoch a report finishes when the job moves to the next one', async () => {
    const { s, job, token, cls } = await runningJob();
    const epoch = cls.profile.epochs[0]!;
    const speedup = epoch.speedup[String(job.allocation.length)]!;
    s.clock.t = job.epochStartedAt! + (cls.profile.rescaleSeconds + epoch.workSeconds / speedup) * 1000;
    expect((await s.request('POST', `/v1/jobs/${job.id}/progress`, { statEpoch: 1 }, token)).status).toBe(
      200,
    );
    expect(cls.workSamples[0]).toHaveLength(1);
    expect(sampleWork(cls.workSamples[0]![0]!)).toBeCloseTo(epoch.workSeconds, 6);
    // With the width it ran at: what the class's speedups are learned from (learned-speedups.ts).
    expect(cls.workSamples[0]![0]).toMatchObject({ width: job.allocation.length });
  });

  it("stores the classes' samples when a report takes one, and only then (every class's are one value)", async () => {
    const { s, job, token, cls } = await runningJob();
    const repo = s.service.deps.repo;
    const writes = vi.spyOn(repo, 'putSetting');
    const sampleWrites = () => writes.mock.calls.filter(([key]) => key === 'workSamples').length;
    const { epochs, rescaleSeconds } = cls.profile;
    const speedup = epochs[0]!.speedup[String(job.allocation.length)]!;
    // A report that skips epochs learns nothing, so it stores nothing either.
    s.clock.t = job.epochStartedAt! + (rescaleSeconds + (2 * epochs[0]!.workSeconds) / speedup) * 1000;
    expect((await s.request('POST', `/v1/jobs/${job.id}/progress`, { statEpoch: 2 }, token)).status).toBe(
      200,
    );
    expect(sampleWrites()).toBe(0);
    // The next epoch's end is a sample: stored, as it is in memory, for the service's next start.
    s.clock.t += (epochs[2]!.workSeconds / speedup) * 1000;
    expect((await s.request('POST', `/v1/jobs/${job.id}/progress`, { statEpoch: 3 }, token)).status).toBe(
      200,
    );
    expect(cls.workSamples[2]).toHaveLength(1);
    expect(sampleWrites()).toBe(1);
    const stored = repo.getSetting<Record<string, unknown>>('workSamples');
    expect(stored?.cifar10).toEqual(cls.workSamples);
  });

  it("times epoch 0 from the job's first report of its generation, so a long startup is not work", async () => {
    const { s, job, token, cls } = await runningJob();
    const epoch = cls.profile.epochs[0]!;
    const speedup = epoch.speedup[String(job.allocation.length)]!;
    const report = (body: Record<string, number>) =>
      s.request('POST', `/v1/jobs/${job.id}/progress`, { generation: job.generation, ...body }, token);
    // Two minutes to start (an image pull on a new node), then it reports epoch 0 and trains it at
    // exactly its profile's speed.
    s.clock.t = job.epochStartedAt! + 120_000;
    expect((await report({ statEpoch: 0 })).status).toBe(200);
    expect(job.epochStartedAt).toBe(s.clock.t);
    const started = s.clock.t;
    s.clock.t += 60_000;
    expect((await report({ statEpoch: 0 })).status).toBe(200); // a later report of epoch 0 keeps it
    expect(job.epochStartedAt).toBe(started);
    s.clock.t = started + (epoch.workSeconds / speedup) * 1000;
    expect((await report({ statEpoch: 1 })).status).toBe(200);
    expect(sampleWork(cls.workSamples[0]![0]!)).toBeCloseTo(epoch.workSeconds, 6);
    // Stored: a restart reads the same clock.
    const row = s.db.$client
      .prepare('select epoch_timed_from_report as fromReport from jobs where id = ?')
      .get(job.id) as { fromReport: number };
    expect(row.fromReport).toBe(1);
  });

  it('keeps an epoch as measured and reads it clamped, so a profile corrected to it reads it whole', async () => {
    const { s, job, token, cls } = await runningJob();
    const epoch = cls.profile.epochs[0]!;
    const speedup = epoch.speedup[String(job.allocation.length)]!;
    // The epoch took 4x its profile's work.
    s.clock.t = job.epochStartedAt! + (cls.profile.rescaleSeconds + (4 * epoch.workSeconds) / speedup) * 1000;
    expect((await s.request('POST', `/v1/jobs/${job.id}/progress`, { statEpoch: 1 }, token)).status).toBe(
      200,
    );
    expect(sampleWork(cls.workSamples[0]![0]!)).toBeCloseTo(4 * epoch.workSeconds, 6);
    const work = () => s.service.estimatedClasses().find((c) => c.name === 'cifar10')!.epochs[0]!.workSeconds;
    // One job moves the estimate at most to twice the profile's work, blended with the profile's 3.
    expect(work()).toBeCloseTo((3 * epoch.workSeconds + 2 * epoch.workSeconds) / 4, 6);
    const corrected = {
      ...cls.profile,
      epochs: cls.profile.epochs.map((e, j) => (j === 0 ? { ...e, workSeconds: 4 * epoch.workSeconds } : e)),
    };
    s.service.putClass(corrected, 1);
    expect(work()).toBeCloseTo(4 * epoch.workSeconds, 6);
  });

  it('learns nothing from a report that skips epochs: its time covers several, not the one it left', async () => {
    const { s, job, token, cls } = await runningJob();
    // Three epochs' worth of time at its width, reported only on reaching epoch 3.
    const { epochs, rescaleSeconds } = cls.profile;
    const speedup = epochs[0]!.speedup[String(job.allocation.length)]!;
    const work = epochs[0]!.workSeconds + epochs[1]!.workSeconds + epochs[2]!.workSeconds;
    s.clock.t = job.epochStartedAt! + (rescaleSeconds + work / speedup) * 1000;
    expect((await s.request('POST', `/v1/jobs/${job.id}/progress`, { statEpoch: 3 }, token)).status).toBe(
      200,
    );
    // Not a sample of epoch 0 three times as long (clamped to twice the profile, it would still pull
    // the class's estimate for epoch 0 up by a quarter).
    expect(cls.workSamples.map((samples) => samples.length)).toEqual(epochs.map(() => 0));
    expect(s.service.estimatedClasses().find((c) => c.name === 'cifar10')!.epochs[0]!.workSeconds).toBe(
      epochs[0]!.workSeconds,
    );
  });

  it('does not time an epoch started by a report from a generation since replaced: its clock holds the restart', async () => {
    const { s, job, token, cls } = await runningJob();
    const { epochs, rescaleSeconds } = cls.profile;
    const at = (epoch: number) =>
      (rescaleSeconds + epochs[epoch]!.workSeconds / epochs[epoch]!.speedup[String(job.allocation.length)]!) *
      1000;
    const old = job.generation;
    s.clock.t = job.epochStartedAt! + at(0);
    const report = (statEpoch: number, generation: number) =>
      s.request('POST', `/v1/jobs/${job.id}/progress`, { statEpoch, generation }, token);
    expect((await report(1, old)).status).toBe(200);
    expect(cls.workSamples[0]).toHaveLength(1);
    // Restarted (a failure, a resume) just as it reached epoch 2: the report it sent lands after.
    job.generation = old + 1;
    s.service.deps.repo.saveJobState(job);
    s.clock.t += at(1);
    expect((await report(2, old)).status).toBe(200);
    expect(job.statEpoch).toBe(2);
    // The new generation restarts (120 s) and runs epoch 2 at its profile's speed: not a clean epoch.
    s.clock.t += 120_000 + at(2);
    expect((await report(3, old + 1)).status).toBe(200);
    expect(cls.workSamples[1] ?? []).toHaveLength(0);
    expect(cls.workSamples[2] ?? []).toHaveLength(0);
    // A clean epoch of the new generation is learned again.
    s.clock.t += at(3);
    expect((await report(4, old + 1)).status).toBe(200);
    expect(cls.workSamples[3]).toHaveLength(1);
  });

  it('refuses a report from a generation the job has not reached, naming it', async () => {
    const { s, job, token } = await runningJob();
    const res = await s.request(
      'POST',
      `/v1/jobs/${job.id}/progress`,
      { statEpoch: 1, generation: job.generation + 1 },
      token,
    );
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: 'generation_ahead', field: 'generation' });
    expect(job.statEpoch).toBe(0);
  });

  it('leaves no trace of a report whose transaction rolls back, and learns the epoch once from the retry', async () => {
    const { s, job, cls } = await runningJob();
    const epoch = cls.profile.epochs[0]!;
    const speedup = epoch.speedup[String(job.allocation.length)]!;
    s.clock.t = job.epochStartedAt! + (cls.profile.rescaleSeconds + epoch.workSeconds / speedup) * 1000;
    const before = {
      statEpoch: job.statEpoch,
      epochStartedAt: job.epochStartedAt,
      workDone: job.workDoneSeconds,
      lastReportAt: job.lastReportAt,
    };
    const repo = s.service.deps.repo;
    failOnce(repo, 'saveJobState');
    expect(() => s.service.reportProgress(job.id, 1, undefined, 30)).toThrow('SQLITE_FULL');
    // Memory is what the store holds: the job in its epoch, the class without the sample.
    expect({
      statEpoch: job.statEpoch,
      epochStartedAt: job.epochStartedAt,
      workDone: job.workDoneSeconds,
      lastReportAt: job.lastReportAt,
    }).toEqual(before);
    expect(before.lastReportAt).toBeNull();
    expect(cls.workSamples[0]).toHaveLength(0);
    // The client's retry is the report: saved, and the epoch learned once.
    s.service.reportProgress(job.id, 1, undefined, 30);
    expect(repo.getJob(job.id)).toMatchObject({ statEpoch: 1, lastReportAt: s.clock.t });
    expect(cls.workSamples[0]).toHaveLength(1);
    // The same for a report of work done within the epoch.
    failOnce(repo, 'saveJobState');
    expect(() => s.service.reportProgress(job.id, 1, undefined, 60)).toThrow('SQLITE_FULL');
    expect(job.workDoneSeconds).toBe(30);
    s.service.reportProgress(job.id, 1, undefined, 60);
    expect(repo.getJob(job.id)!.workDoneSeconds).toBe(60);
  });

  it('learns the last epoch from a completion in it', async () => {
    const { s, job, token, cls } = await runningJob('one');
    const epoch = cls.profile.epochs[0]!;
    const speedup = epoch.speedup[String(job.allocation.length)]!;
    s.clock.t = job.epochStartedAt! + (cls.profile.rescaleSeconds + epoch.workSeconds / speedup) * 1000;
    expect((await s.request('POST', `/v1/jobs/${job.id}/complete`, undefined, token)).status).toBe(200);
    expect(cls.workSamples[0]).toHaveLength(1);
    expect(sampleWork(cls.workSamples[0]![0]!)).toBeCloseTo(epoch.workSeconds, 6);
    // Stored with the completion, for the service's next start.
    expect(s.service.deps.repo.getSetting<Record<string, unknown>>('workSamples')?.one).toEqual(
      cls.workSamples,
    );
  });

  it('learns nothing from a completion before the last epoch: a job that never reported spans them all', async () => {
    // A training command that never calls boa: rank 0 exits 0 (or it calls /complete) still in epoch 0.
    const { s, job, token, cls } = await runningJob();
    const writes = vi.spyOn(s.service.deps.repo, 'putSetting');
    const { epochs, rescaleSeconds } = cls.profile;
    const speedup = epochs[0]!.speedup[String(job.allocation.length)]!;
    const work = epochs.reduce((sum, e) => sum + e.workSeconds, 0);
    s.clock.t = job.epochStartedAt! + (rescaleSeconds + work / speedup) * 1000;
    expect((await s.request('POST', `/v1/jobs/${job.id}/complete`, undefined, token)).status).toBe(200);
    // Not the whole job's work as epoch 0's (clamped to twice the profile, each such job would pull
    // the class's epoch 0 up by a quarter; enough of them double it).
    expect(cls.workSamples.map((samples) => samples.length)).toEqual(epochs.map(() => 0));
    // Nothing learned, nothing stored (every class's samples are one value of tens of KB).
    expect(writes.mock.calls.filter(([key]) => key === 'workSamples')).toEqual([]);
  });
});
