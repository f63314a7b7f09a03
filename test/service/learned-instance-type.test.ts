/**
 * Samples learned on one instance type are not read on another (work-samples.ts): a class whose jobs ran
 * at 1.6x its profile's work on g4dn.12xlarge (T4) is planned from its profile once the node group is
 * g5.12xlarge (A10G, as many GPUs a node), and from its T4 samples again when the type goes back.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock, startService } from './harness.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

const WORK = 3600;
const MYMODEL = {
  name: 'mymodel',
  weight: 1,
  rescaleSeconds: 30,
  epochs: [{ workSeconds: WORK, speedup: { '1': 1, '2': 1.9, '4': 3.6 } }],
};
/** How much slower than its profile the class runs on the T4s. */
const SLOWER = 1.6;

async function service(dataDir: string, clock: ManualClock, instanceType: string) {
  const s = await startService({
    dataDir,
    clock,
    config: {
      instanceType,
      tickSeconds: 60,
      local: { maxNodes: 2, bootSeconds: 0, releaseSeconds: 0 },
      budget: 4,
      creditSpendHours: 0,
      idleFill: false,
    },
  });
  cleanups.push(s.close);
  return s;
}

type Booted = Awaited<ReturnType<typeof service>>;

/** One job run to the end at the plan's width, its epoch SLOWER x the profile's there; the width. */
async function runOne(s: Booted, clock: ManualClock): Promise<number> {
  const { job, token } = s.service.registerJob('mymodel', 'a');
  await s.ticks(3);
  expect(job.state).toBe('running');
  const width = job.allocation.length;
  const speedup = MYMODEL.epochs[0]!.speedup[String(width) as '1'];
  clock.t = job.epochStartedAt! + (MYMODEL.rescaleSeconds + (WORK * SLOWER) / speedup) * 1000;
  const done = await s.request('POST', `/v1/jobs/${job.id}/complete`, undefined, token);
  expect(done.status, JSON.stringify(done.body)).toBe(200);
  await s.ticks(1);
  return width;
}

async function inUse(s: Booted) {
  const answer = await s.request('GET', '/v1/classes');
  expect(answer.status).toBe(200);
  return answer.body.classes.find((c: { name: string }) => c.name === 'mymodel').inUse.epochs[0];
}

describe('learned rates and the instance type', () => {
  it('plans from the profile on a new type and from the old samples again when the type comes back', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'boa-learned-type-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const clock = new ManualClock();

    const t4 = await service(dataDir, clock, 'g4dn.12xlarge');
    t4.service.putClass(MYMODEL, 1);
    await t4.service.planner.idle();
    const widths = new Set<number>();
    for (let i = 0; i < 3; i++) widths.add(await runOne(t4, clock));
    expect(widths.size).toBe(1);
    const sampled = { [String([...widths][0])]: 3 };
    const onT4 = await inUse(t4);
    // (3 x 3600 + 3 x 5760) / 6: half the profile, half the samples.
    expect(onT4.workSeconds).toBeCloseTo((WORK * 3 + WORK * SLOWER * 3) / 6, 0);
    expect(onT4.samples).toEqual(sampled);
    await t4.close();

    const a10g = await service(dataDir, clock, 'g5.12xlarge');
    const onA10g = await inUse(a10g);
    expect(onA10g.workSeconds).toBe(WORK);
    expect(onA10g.samples).toEqual({});
    expect(onA10g.samplesInstanceType).toBe('g5.12xlarge');
    expect(onA10g.samplesOtherInstanceTypes).toEqual({ 'g4dn.12xlarge': 3 });
    expect(a10g.service.state.plan!.plan).toBeDefined();
    await a10g.close();

    const back = await service(dataDir, clock, 'g4dn.12xlarge');
    const again = await inUse(back);
    expect(again.workSeconds).toBeCloseTo(onT4.workSeconds, 6);
    expect(again.samples).toEqual(sampled);
    expect(again.samplesOtherInstanceTypes).toEqual({});
  });

  it('gives samples stored without a type (an older boa) the type of the first start that reads them', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'boa-learned-untyped-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const clock = new ManualClock();
    const older = await service(dataDir, clock, 'g4dn.12xlarge');
    older.service.putClass(MYMODEL, 1);
    // As a boa before types were kept stored them: with a width, and older still, a plain number.
    const slow = WORK * SLOWER;
    const untyped = { mymodel: [[{ workSeconds: slow, width: 1 }, { workSeconds: slow, width: 1 }, slow]] };
    older.service.deps.repo.putSetting('workSamples', untyped, clock.now());
    await older.close();

    const upgraded = await service(dataDir, clock, 'g4dn.12xlarge');
    expect((await inUse(upgraded)).samples).toEqual({ '1': 2, unknown: 1 });
    // Stored with the type at once: the next start, on another type, does not take them for its own.
    const stored = upgraded.service.deps.repo.getSetting<Record<string, unknown[][]>>('workSamples');
    expect(stored!.mymodel![0]).toEqual([
      { workSeconds: slow, width: 1, instanceType: 'g4dn.12xlarge' },
      { workSeconds: slow, width: 1, instanceType: 'g4dn.12xlarge' },
      { workSeconds: slow, instanceType: 'g4dn.12xlarge' },
    ]);
    await upgraded.close();

    const a10g = await service(dataDir, clock, 'g5.12xlarge');
    const onA10g = await inUse(a10g);
    expect(onA10g.samples).toEqual({});
    expect(onA10g.workSeconds).toBe(WORK);
    expect(onA10g.samplesOtherInstanceTypes).toEqual({ 'g4dn.12xlarge': 3 });
  });
});
