/**
 * Replacing and deleting a class (src/service/class-operations.ts): what a class learned from its jobs'
 * epochs (work samples) fits its shape, in memory and in the store, across a restart.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { persistWorkSamples } from '../../src/service/progress.ts';
import { ManualClock, startService } from './harness.ts';

type Booted = Awaited<ReturnType<typeof startService>>;
let boa: Booted | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await boa?.close();
  boa = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const T0 = Date.UTC(2026, 10, 1);

const profile = (name: string, epochs: number) => ({
  name,
  rescaleSeconds: 30,
  epochs: Array.from({ length: epochs }, () => ({ workSeconds: 3600, speedup: { '1': 1, '2': 1.8 } })),
});

/** A service on a data directory whose class x (one epoch) has one stored work sample. */
async function withSample() {
  const dataDir = mkdtempSync(join(tmpdir(), 'boa-class-'));
  dirs.push(dataDir);
  const clock = new ManualClock(T0);
  boa = await startService({ dataDir, clock });
  expect((await boa.request('PUT', '/v1/classes/x', { profile: profile('x', 1) })).status).toBe(200);
  // As a finished clean epoch does (progress.ts recordWorkSample, then persistWorkSamples).
  boa.service.state.classes.get('x')!.workSamples[0]!.push(1234);
  boa.repo.transaction(() => persistWorkSamples(boa!.service, clock.now()));
  return { dataDir, clock };
}

const samples = (b: Booted, name: string) => b.service.state.classes.get(name)?.workSamples;

async function restart(dataDir: string, clock: ManualClock) {
  await boa!.close();
  boa = await startService({ dataDir, clock });
  return boa;
}

describe('work samples of a replaced or deleted class', () => {
  it('a class put again with its shape keeps its samples, across a restart', async () => {
    const { dataDir, clock } = await withSample();
    const put = await boa!.request('PUT', '/v1/classes/x', { profile: profile('x', 1), priorRatePerHour: 2 });
    expect(put.status).toBe(200);
    // Given the instance type of the start that read it (the default's), as one stored before types were.
    expect(samples(await restart(dataDir, clock), 'x')).toEqual([
      [{ workSeconds: 1234, instanceType: 'g4dn.12xlarge' }],
    ]);
  });

  it('a class put again with other work judges its samples against it: bounded, the impossible ones dropped', async () => {
    const { dataDir, clock } = await withSample();
    const work = (b: Booted) =>
      b.service.estimatedClasses().find((c) => c.name === 'x')!.epochs[0]!.workSeconds;
    const x = boa!.service.state.classes.get('x')!;
    // Plausible against 3600 s: one job's epoch that took twice the profile's work.
    x.workSamples[0] = [7000];
    boa!.repo.transaction(() => persistWorkSamples(boa!.service, clock.now()));
    // The operator corrects the profile to 1000 s: the sample counts at most twice that, as a new one would.
    const corrected = profile('x', 1);
    corrected.epochs[0]!.workSeconds = 1000;
    expect((await boa!.request('PUT', '/v1/classes/x', { profile: corrected })).status).toBe(200);
    expect(work(boa!)).toBeLessThanOrEqual(1000 * 1.25 + 1e-9);
    expect(work(await restart(dataDir, clock))).toBeLessThanOrEqual(1000 * 1.25 + 1e-9);
    // Then to 30,000 s: 2000 s is more than 3x faster than that, impossible for the class: dropped.
    corrected.epochs[0]!.workSeconds = 30_000;
    expect((await boa!.request('PUT', '/v1/classes/x', { profile: corrected })).status).toBe(200);
    expect(samples(boa!, 'x')).toEqual([[]]);
    expect(work(boa!)).toBe(30_000);
  });

  it('a profile corrected to what jobs showed reads their samples as measured, not as the old bounds clamped them', async () => {
    const { dataDir, clock } = await withSample();
    const work = (b: Booted) =>
      b.service.estimatedClasses().find((c) => c.name === 'x')!.epochs[0]!.workSeconds;
    // Ten jobs whose epoch took 4x the profile's 3600 s: each counts at most twice it, as recorded.
    const x = boa!.service.state.classes.get('x')!;
    x.workSamples[0] = Array.from({ length: 10 }, () => 14_400);
    boa!.repo.transaction(() => persistWorkSamples(boa!.service, clock.now()));
    expect(work(boa!)).toBeCloseTo((3 * 3600 + 10 * 7200) / 13, 6);
    // The operator corrects the profile to what the jobs showed: the estimate is that, not below it.
    const corrected = profile('x', 1);
    corrected.epochs[0]!.workSeconds = 14_400;
    expect((await boa!.request('PUT', '/v1/classes/x', { profile: corrected })).status).toBe(200);
    expect(work(boa!)).toBeCloseTo(14_400, 6);
    expect(work(await restart(dataDir, clock))).toBeCloseTo(14_400, 6);
  });

  it('a class put again with another number of epochs starts without samples, across a restart', async () => {
    const { dataDir, clock } = await withSample();
    expect((await boa!.request('PUT', '/v1/classes/x', { profile: profile('x', 3) })).status).toBe(200);
    expect(samples(boa!, 'x')).toEqual([[], [], []]);
    expect(samples(await restart(dataDir, clock), 'x')).toEqual([[], [], []]);
  });

  it('a class deleted and put again does not get the old samples back after a restart', async () => {
    const { dataDir, clock } = await withSample();
    expect((await boa!.request('DELETE', '/v1/classes/x')).status).toBe(200);
    expect(samples(await restart(dataDir, clock), 'x')).toBeUndefined();
    expect((await boa!.request('PUT', '/v1/classes/x', { profile: profile('x', 1) })).status).toBe(200);
    expect(samples(boa!, 'x')).toEqual([[]]);
    expect(samples(await restart(dataDir, clock), 'x')).toEqual([[]]);
  });

  it('drops stored samples whose shape is not the stored class', async () => {
    // What a class replaced by the code before this fix left: three epochs' samples, one epoch.
    const { dataDir, clock } = await withSample();
    boa!.repo.transaction(() => boa!.repo.putSetting('workSamples', { x: [[1], [2], [3]] }, clock.now()));
    expect(samples(await restart(dataDir, clock), 'x')).toEqual([[]]);
  });
});

describe('work samples with the widths they ran at', () => {
  const inUse = (b: Booted) => b.service.estimatedClasses().find((c) => c.name === 'x')!.epochs[0]!;
  const atWidth = (n: number, workSeconds: number, width: number) =>
    Array.from({ length: n }, () => ({ workSeconds, width }));

  it('reads samples stored before widths were kept beside new ones: both count for the work', async () => {
    const { dataDir, clock } = await withSample();
    // One as stored before 2026-12-01 (a plain number), one with its width.
    boa!.repo.transaction(() =>
      boa!.repo.putSetting('workSamples', { x: [[2000, { workSeconds: 2000, width: 2 }]] }, clock.now()),
    );
    const b = await restart(dataDir, clock);
    expect(inUse(b).workSeconds).toBeCloseTo((3 * 3600 + 2 * 2000) / 5, 6);
  });

  it('a table put again reads the samples against it: a speedup corrected by hand is not corrected again', async () => {
    const { dataDir, clock } = await withSample();
    // At 2 GPUs the jobs got 1.2x where the table says 1.8x: their samples imply 1.5x the work.
    const x = boa!.service.state.classes.get('x')!;
    x.workSamples[0] = [...atWidth(3, 3600, 1), ...atWidth(3, 3600 * 1.5, 2)];
    boa!.repo.transaction(() => persistWorkSamples(boa!.service, clock.now()));
    expect(inUse(boa!).speedup['2']).toBeCloseTo(1.2, 9);
    // The operator puts 1.2 there: the samples are read as its jobs' durations x 1.2, and it stands.
    const corrected = profile('x', 1);
    corrected.epochs[0]!.speedup['2'] = 1.2;
    expect((await boa!.request('PUT', '/v1/classes/x', { profile: corrected })).status).toBe(200);
    expect(inUse(boa!).speedup['2']).toBeCloseTo(1.2, 9);
    expect(inUse(await restart(dataDir, clock)).speedup['2']).toBeCloseTo(1.2, 9);
  });
});

describe('a class reshaped under its active jobs', () => {
  it('refuses a profile without the epoch an active job is in, naming it; the job keeps reporting', async () => {
    boa = await startService({ clock: new ManualClock(T0) });
    const { body: job } = await boa.request('POST', '/v1/jobs', { class: 'cifar10' });
    const report = (statEpoch: number, workDoneSeconds: number) =>
      boa!.request('POST', `/v1/jobs/${job.id}/progress`, { statEpoch, workDoneSeconds }, job.token);
    expect((await report(5, 10)).status).toBe(200);
    const before = boa.repo.listClasses().find((c) => c.name === 'cifar10')!.profile;

    const shrunk = await boa.request('PUT', '/v1/classes/cifar10', { profile: profile('cifar10', 5) });
    expect(shrunk.status).toBe(409);
    expect(shrunk.body.error).toMatchObject({ code: 'class_in_use', field: 'profile' });
    // Counted from 1, as `boa jobs list` shows it, with the API's 0-based statEpoch beside.
    expect(shrunk.body.error.message).toContain(`job ${job.id} in epoch 6 (statEpoch 5)`);
    expect(boa.repo.listClasses().find((c) => c.name === 'cifar10')!.profile).toEqual(before);
    expect(boa.service.state.classes.get('cifar10')!.profile).toEqual(before);
    expect((await report(5, 20)).status).toBe(200);

    // A profile that still has the job's epoch is taken; without active jobs, any is.
    expect((await boa.request('PUT', '/v1/classes/cifar10', { profile: profile('cifar10', 6) })).status).toBe(
      200,
    );
    expect((await report(5, 30)).status).toBe(200);
    expect((await boa.request('POST', `/v1/jobs/${job.id}/cancel`)).status).toBe(200);
    expect((await boa.request('PUT', '/v1/classes/cifar10', { profile: profile('cifar10', 1) })).status).toBe(
      200,
    );
  });
});
